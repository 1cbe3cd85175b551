// Segment layout shared by reduce_scatter and all_gather (process_group.h): segment r of
// a buffer starts at counts[0] + ... + counts[r-1]. Argument checks common to backends;
// a violated contract is a bug in the caller, so they are ZT_CHECKs.
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <vector>

#include "comm/process_group.h"
#include "core/check.h"

namespace zt {

// offsets[r] for r in 0..counts.size() (offsets.back() is the total).
inline std::vector<size_t> segment_offsets(const std::vector<size_t>& counts) {
  std::vector<size_t> offsets(counts.size() + 1, 0);
  for (size_t r = 0; r < counts.size(); ++r) offsets[r + 1] = offsets[r] + counts[r];
  return offsets;
}

inline void check_segments(const char* op, const void* data, const std::vector<size_t>& counts, int size) {
  ZT_CHECK(counts.size() == static_cast<size_t>(size), "%s: %zu segment counts for a group of %d", op,
           counts.size(), size);
  size_t total = 0;
  for (size_t c : counts) total += c;
  ZT_CHECK(data != nullptr || total == 0, "%s: null buffer for %zu elements", op, total);
}

// reduce_scatter_16's checks: a 16-bit dtype (kBF16 or kF16) and the segment layout.
inline void check_segments_16(const void* data, const std::vector<size_t>& counts, int size, CommDType dtype) {
  ZT_CHECK(dtype == CommDType::kBF16 || dtype == CommDType::kF16, "reduce_scatter_16: dtype %s is not 16-bit",
           comm_dtype_name(dtype));
  check_segments("reduce_scatter_16", data, counts, size);
}

inline void check_peer(const char* op, int peer, int size) {
  ZT_CHECK(peer >= 0 && peer < size, "%s: rank %d outside a group of %d", op, peer, size);
}

inline void check_buffer(const char* op, const void* data, size_t bytes) {
  ZT_CHECK(data != nullptr || bytes == 0, "%s: null buffer for %zu bytes", op, bytes);
}

}  // namespace zt
