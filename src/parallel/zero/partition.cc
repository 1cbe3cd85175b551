// Shard boundaries and per-rank counts of a range.
#include "parallel/zero/partition.h"

#include <algorithm>

namespace zt {

Partition::Partition(size_t numel, int world, size_t align)
    : numel_(numel), world_(world) {
  const size_t s = (numel + static_cast<size_t>(world) - 1) / static_cast<size_t>(world);
  shard_size_ = (s + align - 1) / align * align;
}

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
