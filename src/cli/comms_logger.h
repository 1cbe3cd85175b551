// DeepSpeed's comms_logger (deepspeed/utils/comms_logging.py): per collective and
// message size, the count, total and mean latency, and the algorithmic and bus bandwidth
// (busbw = algbw x 2(n-1)/n for all_reduce, x (n-1)/n for all_gather and reduce_scatter,
// x 1 for broadcast and point-to-point), in log_summary's table shape, over every
// communicator of this rank (world, data, pipeline, tensor, tied). zerotrain adds one
// line DeepSpeed does not have: the logical volume per rank as the ZeRO paper counts it
// (all_reduce 2x its payload), the figure that compares ZeRO stages.
// Keys: enabled, verbose (zerotrain prints the table every steps_per_print steps: the
// native engine has no per-call Python hook to print from), prof_all, prof_ops (the op
// names profiled when prof_all is false), debug (accepted; there is no Python caller
// name to add).
// Thread-safety: the training thread.
#pragma once

#include <string>
#include <vector>

#include "comm/process_group.h"
#include "config/config.h"

namespace zt {

// The summary of `groups` (null and repeated entries are skipped).
std::string comms_summary(const std::vector<ProcessGroup*>& groups, const CommsLoggerConfig& config);

}  // namespace zt
