// RunSession (run_session.h): the grid, the MPI world and the Trainer of one rank.
#include "engine/run_session.h"

#include "engine/run_config.h"

namespace zt {

Status plan_ranks(RunSession* s) {
  const ParallelConfig& p = s->cfg.parallel;
  s->world_size = p.dp * p.pp * p.tp;
  ZT_ASSIGN_OR_RETURN(s->grid, RankGrid::create(s->world_size, p.tp, p.dp, p.pp));
  s->partition = stage_partition(s->cfg);
  return layout_for_rank(s->cfg.model, s->grid, 0, s->partition).status();
}

Status join_mpi(RunSession* s) {
  if (!launched_by_mpi()) return Status::OK();
  const ParallelConfig& p = s->cfg.parallel;
  CommOptions co;
  co.timeout_s = p.comm_timeout_s;
  co.algorithm = p.algorithm;
  co.ring_chunk_bytes = static_cast<size_t>(p.ring_chunk_bytes);
  ZT_ASSIGN_OR_RETURN(s->mpi, MpiWorld::init(co));
  ZT_ASSIGN_OR_RETURN(s->groups, make_mpi_groups(*s->mpi, s->grid));
  s->rank = s->groups.world->rank();
  s->lead = s->rank == 0;
  return Status::OK();
}

Status create_trainer(RunSession* s, const RestoreRequest& from, const ProgressFn& load_progress) {
  s->topts = trainer_options(s->cfg);
  ZT_ASSIGN_OR_RETURN(s->topts.layout, layout_for_rank(s->cfg.model, s->grid, s->rank, s->partition));
  ZT_ASSIGN_OR_RETURN(s->trainer, Trainer::create(s->topts, launched_by_mpi() ? &s->groups : nullptr));
  ZT_RETURN_IF_ERROR(restore_run(*s->trainer, s->cfg, from, s->lead, load_progress));
  const ParallelGroups& g = s->groups;
  s->comm_groups = {g.world, g.dp, g.pp, g.tp, g.tied, &s->trainer->dp()};
  return Status::OK();
}

}  // namespace zt
