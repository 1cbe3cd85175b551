// Measures the collectives the planner prices (comm_model.h) on a process group and fits
// α and β to each: all_reduce, reduce_scatter and all_gather over the whole group, and
// p2p as half the round trip of a ping-pong between ranks 0 and 1. Every rank runs the
// same fixed sequence (5 timed repetitions per size, the median kept), so no rank decides
// alone. Each repetition starts after the link idled 20 ms: in training, compute separates
// the collectives, and a link with a token bucket or a TCP window that a back-to-back
// stream keeps full would otherwise look slower than training sees it.
// The fits come back on every rank (rank 0's timings, broadcast). Each is then checked at
// the sizes half-way between its own (validation_sizes), measured the same way but not fitted
// on, and keeps them as its validation points (comm_model.h: validation_error).
// Thread-safety: collective over the group; one call at a time.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "comm/process_group.h"
#include "core/status.h"
#include "planner/comm_model.h"

namespace zt {

struct CommProbeOptions {
  std::vector<size_t> sizes;      // bytes per measurement (whole buffer); empty: 4 KiB .. 64 MiB by 4x
};

// Sizes half-way (geometrically, rounded down to 64 bytes) between consecutive `sizes`:
// where each fit is checked against measurements it was not built from.
std::vector<size_t> validation_sizes(const std::vector<size_t>& sizes);

StatusOr<std::map<std::string, CollectiveFit>> probe_collectives(ProcessGroup& g, const CommProbeOptions& options);

}  // namespace zt
