// Shard boundaries and per-rank counts of a range.
#include "parallel/zero/partition.h"

#include <algorithm>

namespace zt {

Partition::Partition(size_t numel, int world)
    : numel_(numel), world_(world), shard_size_((numel + static_cast<size_t>(world) - 1) / static_cast<size_t>(world)) {}

ElementRange Partition::shard(int rank) const {
  const size_t r = static_cast<size_t>(rank);
  return {std::min(r * shard_size_, numel_), std::min((r + 1) * shard_size_, numel_)};
}

std::vector<size_t> Partition::counts(ElementRange range) const {
  std::vector<size_t> out(static_cast<size_t>(world_), 0);
  for (int r = 0; r < world_; ++r) {
    const ElementRange s = shard(r);
    const size_t lo = std::max(s.begin, range.begin), hi = std::min(s.end, range.end);
    out[static_cast<size_t>(r)] = hi > lo ? hi - lo : 0;
  }
  return out;
}

}  // namespace zt
