// sum of squares over a flat array (for global gradient norms). The array is cut into
// fixed 64 Ki-element chunks whose float partial sums are added in chunk order in
// double: the result depends only on the data, never on the thread count.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/cpu/simd/tail.h"

template <class S>
double sum_squares_impl(const float* x, int64_t n) {
  constexpr int64_t kChunk = 1 << 16;
  const int64_t nchunks = (n + kChunk - 1) / kChunk;
  std::vector<double> partial(static_cast<size_t>(nchunks));
#pragma omp parallel for schedule(static)
  for (int64_t c = 0; c < nchunks; ++c) {
    const int64_t lo = c * kChunk, hi = (lo + kChunk < n) ? lo + kChunk : n;
    typename S::V a0 = S::zero(), a1 = S::zero();
    int64_t i = lo;
    for (; i + 2 * S::kWidth <= hi; i += 2 * S::kWidth) {
      const auto x0 = S::load(x + i), x1 = S::load(x + i + S::kWidth);
      a0 = S::fmadd(x0, x0, a0);
      a1 = S::fmadd(x1, x1, a1);
    }
    for (; i + S::kWidth <= hi; i += S::kWidth) {
      const auto x0 = S::load(x + i);
      a0 = S::fmadd(x0, x0, a0);
    }
    if (i < hi) {
      const auto x0 = zt::simd::load_tail<S>(x + i, static_cast<int>(hi - i), 0.0f);
      a1 = S::fmadd(x0, x0, a1);
    }
    partial[static_cast<size_t>(c)] = static_cast<double>(S::reduce_add(S::add(a0, a1)));
  }
  double total = 0.0;
  for (double p : partial) total += p;
  return total;
}
