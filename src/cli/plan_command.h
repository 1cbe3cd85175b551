// `zerotrain plan`: searches the layouts of a model on a cluster (DeepSpeed's autotuner
// space plus model parallelism, priced instead of launched): tp (within a host) x pp x dp
// over every rank, ZeRO stage 0-3, micro-batch size (powers of two dividing the rank's
// share of the global batch, which stays the config's) and activation checkpointing
// (none or every block). Each candidate goes through the same configuration checks as
// train (a refused one is counted with its reason) and evaluate_layout (plan_eval.h);
// those that fit --mem-per-host are ranked by predicted step time.
// Exit status: 0 printed (even when nothing fits: it says so), 2 bad arguments or config.
#pragma once

#include "cli/command.h"

#include "cli/estimate_command.h"

namespace zt {

struct PlanArgs {
  EstimateArgs estimate;  // --config, --set, cluster, calibration
  int top = 10;           // rows printed
  int max_micro_batch = 64;
  bool json = false;
};

int run_plan(const PlanArgs& args);

// Registers `zerotrain plan` and its flags.
Command add_plan_command(CLI::App& app);

}  // namespace zt
