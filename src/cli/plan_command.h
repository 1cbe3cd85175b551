// `zerotrain plan`: searches the layouts of a model on a cluster (DeepSpeed's autotuner
// space plus model parallelism, priced instead of launched): tp (within a host) x pp x dp
// over every rank, ZeRO stage 0-3, micro-batch size (powers of two dividing the rank's
// share of the global batch, which stays the config's) and activation checkpointing
// (none or every block). Each candidate goes through the same configuration checks as
// train (a refused one is counted with its reason) and evaluate_layout (plan_eval.h);
// those that fit --mem-per-host are ranked by predicted step time.
// Ranks per host and threads per rank: fixed by --procs-per-host (or --world,
// --threads-per-rank); otherwise every split of a host's cores (planner/host_split.h) is a
// dimension of the search, each priced from the calibration table nearest its threads and
// concurrent ranks. The answer ends with the `zerotrain launch` line that runs the first.
// Exit status: 0 printed (even when nothing fits: it says so), 2 bad arguments or config.
#pragma once

#include "cli/command.h"

#include "cli/estimate_command.h"

namespace zt {

struct PlanArgs {
  EstimateArgs estimate;  // --config, --set, cluster, calibration
  int top = 10;           // rows printed
  int max_micro_batch = 64;
  int cores_per_host = 0;    // 0: this machine's physical cores (splits searched without --procs-per-host)
  int sockets_per_host = 0;  // 0: this machine's sockets; with --cores-per-host, 1
  bool json = false;
};

int run_plan(const PlanArgs& args);

// Registers `zerotrain plan` and its flags.
Command add_plan_command(CLI::App& app);

}  // namespace zt
