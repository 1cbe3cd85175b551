// `zerotrain estimate`: the memory every rank of a run will need, from its configuration
// alone, before launching it (DeepSpeed's estimate_zero*_model_states_mem_needs, for the
// whole run: model states by the ZeRO formulas on each rank's part of the model,
// activations, and a bound on communication buffers; engine/memory_estimate.h).
#pragma once

#include "cli/command.h"

#include <vector>

#include "cli/train_command.h"
#include "config/config.h"
#include "engine/memory_estimate.h"
#include "planner/perf_model.h"

namespace zt {

struct EstimateArgs {
  TrainCommandArgs config;  // --config and --set, as for train
  int world = 0;            // the ranks the run will have (mpirun -np); 0: hosts x procs, else 1
  int hosts = 0;            // the cluster (0: one host with `world` ranks)
  int procs_per_host = 0;
  int threads_per_rank = 0;  // 0: this machine's cores / procs per host, at least 1
  std::string mem_per_host;    // "64GiB"; "": not checked
  std::string mem_per_device;  // a device run: one device's memory, "80GiB"; "": not checked
  std::string calibration;   // "": default_calibration_path()
  bool json = false;         // one JSON object instead of the tables
};

// Exit status: 0 printed, 2 bad configuration or arguments (a layout that does not fit
// still prints, with exit 0).
int run_estimate(const EstimateArgs& args);

// The cluster of --hosts/--procs-per-host/--world/--threads-per-rank/--mem-per-host.
StatusOr<ClusterSpec> cluster_from_args(const EstimateArgs& args);

// Every rank's estimate for a resolved configuration and world size, in rank order.
StatusOr<std::vector<MemoryEstimate>> estimate_all_ranks(const ZtConfig& config, int world);

// Registers `zerotrain estimate` and its flags.
Command add_estimate_command(CLI::App& app);

}  // namespace zt
