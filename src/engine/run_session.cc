// RunSession (run_session.h): the grid, the MPI world and the Trainer of one rank.
#include "engine/run_session.h"

#include "engine/host_map.h"
#include "engine/host_memory_check.h"
#include "engine/native_groups.h"
#include "engine/rank_sync.h"
#include "engine/run_config.h"
#include "engine/run_report.h"

namespace zt {

Status plan_ranks(RunSession* s) {
  const ParallelConfig& p = s->cfg.parallel;
  s->world_size = p.dp * p.pp * p.tp;
  ZT_ASSIGN_OR_RETURN(s->grid, RankGrid::create(s->world_size, p.tp, p.dp, p.pp, p.ep, p.sp, s->cfg.zero.fetch.hpz_partition_size));
  s->partition = stage_partition(s->cfg);
  return layout_for_rank(s->cfg.model, s->grid, 0, s->partition, s->cfg.parallel.virtual_stages).status();
}

Status join_mpi(RunSession* s) {
  if (!launched_by_mpi()) {
    s->host_map = describe_host_map(nullptr).value();  // one process: no communication, no failure
    return Status::OK();
  }
  const ParallelConfig& p = s->cfg.parallel;
  CommOptions co;
  co.timeout_s = p.comm_timeout_s;
  co.algorithm = p.algorithm;
  co.ring_chunk_bytes = static_cast<size_t>(p.ring_chunk_bytes);
  ZT_ASSIGN_OR_RETURN(s->mpi, MpiWorld::init(co));
  ZT_ASSIGN_OR_RETURN(s->groups, make_mpi_groups(*s->mpi, s->grid));
  // On a device: its own communicators (NCCL) where every rank can use them.
  ZT_ASSIGN_OR_RETURN(const std::string note, adopt_native_groups(&s->groups, run_backend(s->cfg), co));
  if (!note.empty()) s->cfg.notes.push_back(note);
  s->rank = s->groups.world->rank();
  s->lead = s->rank == 0;
  ZT_ASSIGN_OR_RETURN(s->host_map, describe_host_map(s->groups.world));
  return Status::OK();
}

Status load_tokenizer(RunSession* s, bool demo) {
  ZT_ASSIGN_OR_RETURN(s->tok, prepare_inputs(&s->cfg, demo, s->lead));
  return Status::OK();
}

Status inputs_ready(RunSession* s) { return all_ranks_ready(s->groups.world); }

Status open_data(RunSession* s) {
  ZT_ASSIGN_OR_RETURN(s->data, open_datasets(s->cfg));
  return Status::OK();
}

Status create_trainer(RunSession* s, const RestoreRequest& from, const ProgressFn& load_progress) {
  s->topts = trainer_options(s->cfg);
  ZT_ASSIGN_OR_RETURN(s->topts.layout, layout_for_rank(s->cfg.model, s->grid, s->rank, s->partition, s->cfg.parallel.virtual_stages));
  ZT_RETURN_IF_ERROR(check_host_memory(s->topts, s->grid, s->rank, launched_by_mpi() ? s->groups.world : nullptr));
  ZT_ASSIGN_OR_RETURN(s->trainer, Trainer::create(s->topts, launched_by_mpi() ? &s->groups : nullptr));
  ZT_RETURN_IF_ERROR(restore_run(*s->trainer, s->cfg, from, s->lead, load_progress));
  const ParallelGroups& g = s->groups;
  s->comm_groups = {g.world, g.dp, g.pp, g.tp, g.tied, g.sp, &s->trainer->dp()};
  return Status::OK();
}

StatusOr<RunEnd> end_run(RunSession* s, bool gather_params) {
  RunEnd end;
  Trainer& t = *s->trainer;
  if (gather_params) {
    end.full_params.resize(t.param_table().numel());
    ZT_RETURN_IF_ERROR(t.gather_params(end.full_params.data()));
  }
  ZT_ASSIGN_OR_RETURN(end.report, collect_run_report(t, s->groups.world != nullptr ? *s->groups.world : t.dp(), &end.ranks));
  return end;
}

}  // namespace zt
