// timed_trial: how fast a configuration trains on this job, as DeepSpeed's autotuner
// measures an experiment: this rank's Trainer for `cfg` runs `steps` steps of the
// training split, the steps from `first_timed` (1-based) on are timed, and the mean step
// time over every rank of the job comes back.
// Collective over groups->world (null groups: one process); every rank passes the same
// cfg, steps and first_timed. Errors: the config's and the Trainer's.
// Thread-safety: the training thread.
#pragma once

#include <cstdint>

#include "config/config.h"
#include "core/status.h"
#include "data/dataset.h"
#include "engine/parallel_setup.h"

namespace zt {

struct TrialPlacement {
  const RankGrid* grid = nullptr;
  int rank = 0;
  StagePartition partition = StagePartition::kFlops;
  const ParallelGroups* groups = nullptr;  // null: one process
};

StatusOr<double> timed_trial(const ZtConfig& cfg, const TrialPlacement& at, const TokenDataset& train, int64_t steps,
                             int64_t first_timed);

}  // namespace zt
