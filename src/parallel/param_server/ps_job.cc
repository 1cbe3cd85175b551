// A rank's whole parameter-server job; see ps_job.h.
#include "parallel/param_server/ps_job.h"

#include <algorithm>

#include "nn/gpt_params.h"
#include "parallel/param_server/ps_layout.h"

namespace zt {

Status validate_ps_job(const PsOptions& o, int world) {
  const std::string S = std::to_string(o.servers), N = std::to_string(world);
  if (o.servers < 1) return Status::InvalidArgument("/parameter_server/servers: " + S + " must be at least 1");
  if (world - o.servers < 1) {
    return Status::InvalidArgument("/parameter_server/servers: " + S + " server(s) leave no worker among the " + N +
                                   " ranks launched; launch at least " + std::to_string(o.servers + 1) + " ranks");
  }
  if (o.slow_worker_rank >= 0 && (o.slow_worker_rank < o.servers || o.slow_worker_rank >= world)) {
    return Status::InvalidArgument("/parameter_server/test_slow_worker/rank: " + std::to_string(o.slow_worker_rank) +
                                   " is not a worker rank (workers are ranks " + S + ".." + std::to_string(world - 1) +
                                   ")");
  }
  if (o.staleness < 0) return Status::InvalidArgument("/parameter_server/staleness: must be >= 0");
  if (!(o.deadline_s > 0.0)) return Status::InvalidArgument("/parameter_server/deadline_s: must be positive");
  if (o.bucket_elems == 0) return Status::InvalidArgument("/parameter_server/bucket_size: must be positive");
  return Status::OK();
}

CommOptions ps_comm_options(const CommOptions& base, const PsOptions& options) {
  CommOptions o = base;
  o.timeout_s = 2.0 * options.deadline_s + 10.0;  // a backstop: the roles' own deadlines come first
  o.poll_max_sleep_us = std::min(o.poll_max_sleep_us, 200.0);  // chains of messages: wake up sooner
  return o;
}

StatusOr<PsGroups> make_ps_groups(MpiWorld& mpi, const PsOptions& options, const CommOptions& base) {
  PsGroups g;
  g.world = &mpi.world();
  const int rank = g.world->rank();
  ZT_RETURN_IF_ERROR(validate_ps_job(options, g.world->size()));
  const CommOptions o = ps_comm_options(base, options);
  ZT_ASSIGN_OR_RETURN(auto ps, mpi.split(0, rank, o));
  ZT_ASSIGN_OR_RETURN(auto role, mpi.split(rank < options.servers ? 0 : 1, rank, o));
  g.ps = ps.get();
  g.role = role.get();
  g.owned.push_back(std::move(ps));
  g.owned.push_back(std::move(role));
  return g;
}

namespace {

// A worker's units until the job's sample budget is spent, then its closing figures.
Status run_worker(PsWorker& worker, PsWorkerHooks* hooks, bool keep_params, PsRankReport* mine,
                  PsRunResult* result) {
  while (true) {
    ZT_ASSIGN_OR_RETURN(const int64_t unit, worker.next_unit());
    if (unit == kNoUnit) break;
    ZT_ASSIGN_OR_RETURN(const std::vector<MicroBatch> batches, hooks->unit_batches(unit));
    ZT_ASSIGN_OR_RETURN(const PsWorkerStep st, worker.step(batches));
    if (hooks->on_step) hooks->on_step(st);
  }
  ZT_RETURN_IF_ERROR(worker.finish());
  mine->index = worker.index();
  mine->worker = worker.stats();
  if (!hooks->validation.empty()) {
    ZT_ASSIGN_OR_RETURN(mine->val_loss, worker.evaluate(hooks->validation));
  }
  if (keep_params) result->final_params = worker.host_params();
  return Status::OK();
}

// A role that failed may have operations in flight on its buffers: withdraw them before
// the role (and its buffers) is destroyed (ProcessGroup::abandon; under MPI this ends the job).
Status abandon_role(const PsGroups& groups, Status failure) {
  groups.ps->abandon(failure);
  groups.role->abandon(failure);
  return failure;
}

}  // namespace

StatusOr<PsRunResult> run_ps_rank(const PsModelOptions& model, const PsOptions& options, const PsGroups& groups,
                                  int64_t steps, PsWorkerHooks* hooks, bool keep_params) {
  const int rank = groups.ps->rank(), world = groups.ps->size();
  ZT_RETURN_IF_ERROR(validate_ps_job(options, world));
  ZT_RETURN_IF_ERROR(model.model.validate());
  if (steps <= 0) return Status::InvalidArgument("/training/steps: must be positive");
  const PsLayout layout(build_gpt_param_table(model.model), model.model.n_layer, options.servers,
                        world - options.servers, options.bucket_elems);
  PsRankReport mine;
  mine.world_rank = rank;
  PsRunResult result;
  if (layout.is_server(rank)) {
    ZT_ASSIGN_OR_RETURN(auto server, PsServer::create(model, options, layout, groups.ps, groups.role));
    if (Status s = server->run(steps); !s.ok()) return abandon_role(groups, std::move(s));
    mine.is_server = 1;
    mine.index = rank;
    mine.server = server->stats();
    if (rank == 0) result.records = server->step_records();
  } else {
    ZT_ASSIGN_OR_RETURN(auto worker, PsWorker::create(model, options, layout, groups.ps, groups.role));
    if (Status s = run_worker(*worker, hooks, keep_params, &mine, &result); !s.ok()) {
      return abandon_role(groups, std::move(s));
    }
  }
  add_comm_stats(groups.ps->stats(), &mine);
  ZT_ASSIGN_OR_RETURN(result.reports, gather_ps_reports(*groups.world, mine));
  result.summary = summarize_ps(result.reports, options);
  return result;
}

}  // namespace zt
