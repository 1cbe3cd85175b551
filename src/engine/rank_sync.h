// The few whole-run agreements between ranks that the command line needs (everything a
// rank must wait for outside the training step): all ranks ready, a sum, every rank's row of
// figures, every rank's string at rank 0, and rank 0's decision everywhere. The CLI calls
// these instead of a ProcessGroup, so how a collective is ordered and waited for (today
// Work::wait on the host) stays inside the engine and comm/.
// Each is collective: every rank of `group` calls it, in the same order. A null group means
// a single process: the call returns the rank's own value at once.
#pragma once

#include <string>
#include <vector>

#include "comm/process_group.h"
#include "core/status.h"

namespace zt {

// Returns once every rank has called it (a barrier).
Status all_ranks_ready(ProcessGroup* group);

// v summed over the ranks, in fp64.
StatusOr<double> sum_over_ranks(ProcessGroup* group, double v);

// Every rank's `row` (all rows the same length), rank-major: row r at [r * row.size()].
StatusOr<std::vector<double>> rows_of_ranks(ProcessGroup* group, const std::vector<double>& row);

// On rank 0: every rank's `mine`, by rank. Elsewhere: empty.
StatusOr<std::vector<std::string>> strings_at_root(ProcessGroup* group, const std::string& mine);

// Rank 0's `decision`, on every rank.
StatusOr<bool> root_decides(ProcessGroup* group, bool decision);

}  // namespace zt
