// One rank's part of a parameter-server job, end to end: the groups it needs, its role
// (PsServer or PsWorker) run to completion, the final evaluation and the gathered report.
// Used by `zerotrain train` (cli/ps_command.cc), the test drivers and the benchmark.
// Groups: `ps` holds every rank in world order (messages; its communication deadline is
// a backstop at 2 x the parameter-server deadline + 10 s, so the roles' own, clearer
// deadline messages come first); `role` is the servers' or the workers' group.
// Thread-safety: one thread per rank.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "comm/mpi_world.h"
#include "comm/process_group.h"
#include "core/status.h"
#include "parallel/param_server/ps_options.h"
#include "parallel/param_server/ps_report.h"
#include "parallel/param_server/ps_server.h"
#include "parallel/param_server/ps_worker.h"

namespace zt {

struct PsGroups {
  ProcessGroup* world = nullptr;  // every rank (the report)
  ProcessGroup* ps = nullptr;     // every rank, world order (the job's messages)
  ProcessGroup* role = nullptr;   // the servers' or the workers' group
  std::vector<std::unique_ptr<ProcessGroup>> owned;
};

// Checks the roles against the world size: 1 <= servers < world, the slow-worker hook
// names a worker rank. Errors name the config key.
Status validate_ps_job(const PsOptions& options, int world_size);

// The communication options of the `ps` group, from the world's.
CommOptions ps_comm_options(const CommOptions& base, const PsOptions& options);

// Under MPI: collective over the world.
StatusOr<PsGroups> make_ps_groups(MpiWorld& mpi, const PsOptions& options, const CommOptions& base);

struct PsWorkerHooks {
  // The grad_accum micro-batches of a unit; the storage stays the caller's until the next call.
  std::function<StatusOr<std::vector<MicroBatch>>(int64_t unit)> unit_batches;
  std::function<void(const PsWorkerStep&)> on_step;  // optional: progress
  std::vector<MicroBatch> validation;               // optional: evaluated on the final parameters
};

struct PsRunResult {
  std::vector<PsRankReport> reports;  // every rank's, by world rank
  PsSummary summary;
  std::vector<PsStepRecord> records;  // server 0 in synchronous mode: each global step
  std::vector<float> final_params;    // workers, when asked: the final parameters
};

// Runs this rank's role for a job of `steps` global batches. Collective over the world.
// A role that fails first abandons its operations in flight (ProcessGroup::abandon), so
// no peer touches its buffers once they are freed; under MPI that ends the job
// (abort_mpi_job), with the failure's message.
StatusOr<PsRunResult> run_ps_rank(const PsModelOptions& model, const PsOptions& options, const PsGroups& groups,
                                  int64_t steps, PsWorkerHooks* hooks, bool keep_params);

}  // namespace zt
