// RunSession: one rank's part of a `zerotrain train` run, set up in order by the engine:
// start_ranks (the rank grid and, under mpirun or srun, the MPI world and its groups),
// then, once the caller has opened its inputs, create_trainer (this rank's layout and
// Trainer, fresh or restored). The CLI parses flags and the configuration, opens the
// data, and hands the session to the training loop.
// Invariants: after start_ranks, grid, partition, rank, lead and world_size are final and
// groups is set under MPI (empty otherwise); after create_trainer, trainer and
// comm_groups are set. Errors are Statuses: start_ranks and create_trainer return the
// user's input errors (InvalidArgument and the config's own codes), join_mpi the
// transport's.
// Thread-safety: one thread per rank.
#pragma once

#include <memory>
#include <vector>

#include "comm/mpi_world.h"
#include "config/config.h"
#include "core/progress_fn.h"
#include "core/status.h"
#include "engine/parallel_setup.h"
#include "engine/run_checkpoints.h"
#include "engine/trainer.h"

namespace zt {

struct RunSession {
  ZtConfig cfg;
  RankGrid grid = RankGrid::create(1, 1, 1, 1).value();
  StagePartition partition = StagePartition::kFlops;
  std::unique_ptr<MpiWorld> mpi;
  ParallelGroups groups;  // null groups without MPI
  int world_size = 1, rank = 0;
  bool lead = true;  // rank 0: prints, writes reports
  TrainerOptions topts;
  std::unique_ptr<Trainer> trainer;
  std::vector<ProcessGroup*> comm_groups;  // every group the comms summary reads
};

// The grid of cfg.parallel and rank 0's layout (checks the partition); no communication.
Status plan_ranks(RunSession* s);
// Under a launcher: the MPI world with the configured transport and its groups; nothing
// otherwise.
Status join_mpi(RunSession* s);
// This rank's Trainer (collective under MPI), restored from `from` when a path is set.
Status create_trainer(RunSession* s, const RestoreRequest& from, const ProgressFn& load_progress = {});

}  // namespace zt
