// `zerotrain estimate`: the memory every rank of a run will need, from its configuration
// alone, before launching it (DeepSpeed's estimate_zero*_model_states_mem_needs, for the
// whole run: model states by the ZeRO formulas on each rank's part of the model,
// activations, and a bound on communication buffers; engine/memory_estimate.h).
#pragma once

#include <vector>

#include "cli/train_command.h"
#include "config/config.h"
#include "engine/memory_estimate.h"

namespace zt {

struct EstimateArgs {
  TrainCommandArgs config;  // --config and --set, as for train
  int world = 1;            // the ranks the run will have (mpirun -np)
};

// Exit status: 0 printed, 2 bad configuration.
int run_estimate(const EstimateArgs& args);

// Every rank's estimate for a resolved configuration and world size, in rank order.
StatusOr<std::vector<MemoryEstimate>> estimate_all_ranks(const ZtConfig& config, int world);

}  // namespace zt
