// RunSession: one rank's part of a `zerotrain train` run, set up in order by the engine:
// plan_ranks and join_mpi (the rank grid and, under mpirun or srun, the MPI world and its
// groups), load_tokenizer, inputs_ready and open_data (the token files, the demo's
// prepared by rank 0 while the others wait), create_trainer (this rank's layout and
// Trainer, fresh or restored), the training loop (training_loop.h), and end_run (the
// parameters for a sample and the run report, gathered). The CLI parses flags and the
// configuration, calls these in order and prints; every collective is in here.
// Invariants: after plan_ranks, grid, partition and world_size are final; after join_mpi,
// rank and lead are, and groups is set under MPI (null groups otherwise); after
// create_trainer, trainer and comm_groups are set. Errors are Statuses: join_mpi,
// inputs_ready and end_run return the transport's and the machine's, the others the
// user's input errors (the CLI exits 1 or 2 by that split).
// Thread-safety: one thread per rank.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "comm/mpi_world.h"
#include "config/config.h"
#include "core/progress_fn.h"
#include "core/status.h"
#include "data/tokenizer.h"
#include "engine/parallel_setup.h"
#include "engine/run_checkpoints.h"
#include "engine/run_inputs.h"
#include "engine/trainer.h"
#include "io/json_strict.h"

namespace zt {

struct RunSession {
  ZtConfig cfg;
  RankGrid grid = RankGrid::create(1, 1, 1, 1).value();
  StagePartition partition = StagePartition::kFlops;
  std::unique_ptr<MpiWorld> mpi;
  ParallelGroups groups;  // null groups without MPI
  int world_size = 1, rank = 0;
  bool lead = true;  // rank 0: prints, writes reports
  std::string host_map;  // rank 0: the banner's hosts line (join_mpi)
  std::unique_ptr<Tokenizer> tok;
  RunData data;
  TrainerOptions topts;
  std::unique_ptr<Trainer> trainer;
  std::vector<ProcessGroup*> comm_groups;  // every group the comms summary reads
};

// The grid of cfg.parallel and rank 0's layout (checks the partition); no communication.
Status plan_ranks(RunSession* s);
// Under a launcher: the MPI world with the configured transport and its groups; nothing
// otherwise.
Status join_mpi(RunSession* s);
// The tokenizer, checked against the model; with `demo`, cfg.data points at the demo
// corpus, which rank 0 prepares on first use.
Status load_tokenizer(RunSession* s, bool demo);
// Collective: every rank waits until rank 0's files are written.
Status inputs_ready(RunSession* s);
// The train and validation splits.
Status open_data(RunSession* s);
// This rank's Trainer (collective under MPI), restored from `from` when a path is set.
Status create_trainer(RunSession* s, const RestoreRequest& from, const ProgressFn& load_progress = {});

// What a finished run hands its printer (rank 0's fields; empty elsewhere).
struct RunEnd {
  std::vector<float> full_params;  // the whole model, when asked for and held whole on every rank
  std::string report;              // the per-rank memory and communication tables
  Json ranks;                      // the same figures for run_report.json
};
// Collective: with `gather_params` (no pipeline or tensor parallelism) the parameters,
// then the run report over the job.
StatusOr<RunEnd> end_run(RunSession* s, bool gather_params);

}  // namespace zt
