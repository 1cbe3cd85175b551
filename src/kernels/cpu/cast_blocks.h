// The split of a bulk cast over the OpenMP threads (the bf16 and f16 casts): f(dst + lo,
// src + lo, len) over [0, n) in `block`-element pieces, or one call on this thread when n
// fits one block or the caller is one of the threads already. No nested team is started:
// even a one-thread team costs microseconds (3.4 us on a 2-core VM), more than a
// cache-sized cast.
// Thread-safety: f must be callable from several threads at once.
#pragma once

#include <omp.h>

#include <cstdint>

namespace zt {

template <typename D, typename S, typename F>
void cast_blocks(D* dst, const S* src, int64_t n, int64_t block, F&& f) {
  const int64_t count = (n + block - 1) / block;
  if (count <= 1 || omp_in_parallel()) {
    f(dst, src, n);
    return;
  }
#pragma omp parallel for schedule(static)
  for (int64_t b = 0; b < count; ++b) {
    const int64_t lo = b * block;
    f(dst + lo, src + lo, lo + block < n ? block : n - lo);
  }
}

}  // namespace zt
