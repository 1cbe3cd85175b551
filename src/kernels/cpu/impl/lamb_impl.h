// LAMB (DeepSpeed's FusedLamb, csrc/lamb/fused_lamb_cuda_kernel.cu) over one whole
// tensor, in two passes around the trust ratio (read from the sums by lamb_apply). fp32 arithmetic in a fixed
// operation order with no fused multiply-add, so every ISA computes the same bits:
//   lamb_moments: g <- g * grad_scale
//                 m <- m * b1 + g * (1 - b1)
//                 v <- v * b2 + ((1 - b2) * g) * g
//                 u  = m / denom + decay * p,  denom = eps_inside_sqrt ? sqrt(v + eps) : sqrt(v) + eps
//                 sums += (sum p^2, sum u^2)   (p before the update)
//   lamb_apply:   p <- p + lamb_neg_step(sums) * u   (u recomputed from m, v, p exactly as above)
// The sums are ISA- and thread-count-independent as well: every square is exact in double
// (a float times a float fits in 53 bits), element i of a fixed 16 Ki-element chunk goes
// to double accumulator (i % 8), the eight are added in a fixed tree and the chunks in
// chunk order. Vector widths (8, 16) divide the chunk, so lane j of a vector is element
// j % 8 of its accumulator row on every ISA.
// Memory-bound: the moments pass reads 4 streams and writes 2, the apply pass reads 3
// and writes 1.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/cpu/simd/tail.h"
#include "kernels/kernel_args.h"

template <class S>
static inline void lamb_moments_vec(typename S::V g, typename S::V& m, typename S::V& v, const zt::LambArgs& a) {
  g = S::mul(g, S::set1(a.grad_scale));
  m = S::add(S::mul(m, S::set1(a.beta1)), S::mul(g, S::set1(a.one_minus_beta1)));
  v = S::add(S::mul(v, S::set1(a.beta2)), S::mul(S::mul(S::set1(a.one_minus_beta2), g), g));
}

// u = m / denom + decay * p.
template <class S>
static inline typename S::V lamb_update_vec(typename S::V p, typename S::V m, typename S::V v, const zt::LambArgs& a) {
  const auto denom = a.eps_inside_sqrt ? S::sqrt(S::add(v, S::set1(a.eps))) : S::add(S::sqrt(v), S::set1(a.eps));
  return S::add(S::div(m, denom), S::mul(S::set1(a.decay), p));
}

// acc[j % 8] += x[j]^2 for the first `count` lanes, in double.
template <class S>
static inline void lamb_add_squares(double* acc, typename S::V x, int count) {
  alignas(64) float t[S::kWidth];
  S::store(t, x);
  for (int j = 0; j < count; ++j) acc[j & 7] += static_cast<double>(t[j]) * static_cast<double>(t[j]);
}

static inline double lamb_lane_total(const double* acc) {
  return ((acc[0] + acc[4]) + (acc[2] + acc[6])) + ((acc[1] + acc[5]) + (acc[3] + acc[7]));
}

constexpr int64_t kLambChunk = 1 << 14;  // a multiple of every vector width

template <class S>
void lamb_moments_impl(const float* p, const float* g, float* m, float* v, int64_t n, const zt::LambArgs& a,
                       zt::LambSums* sums) {
  const int64_t nchunks = (n + kLambChunk - 1) / kLambChunk;
  std::vector<double> partial(static_cast<size_t>(2 * nchunks));
#pragma omp parallel for schedule(static)
  for (int64_t c = 0; c < nchunks; ++c) {
    const int64_t lo = c * kLambChunk, hi = (lo + kLambChunk < n) ? lo + kLambChunk : n;
    double acc_p[8] = {0, 0, 0, 0, 0, 0, 0, 0}, acc_u[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    int64_t i = lo;
    for (; i + S::kWidth <= hi; i += S::kWidth) {
      const auto vp = S::load(p + i);
      auto vm = S::load(m + i), vv = S::load(v + i);
      lamb_moments_vec<S>(S::load(g + i), vm, vv, a);
      S::store(m + i, vm);
      S::store(v + i, vv);
      lamb_add_squares<S>(acc_p, vp, S::kWidth);
      lamb_add_squares<S>(acc_u, lamb_update_vec<S>(vp, vm, vv, a), S::kWidth);
    }
    if (i < hi) {  // padding lanes: p = m = g = 0, v = 1 (no NaN), and they are not summed
      const int k = static_cast<int>(hi - i);
      const auto vp = zt::simd::load_tail<S>(p + i, k, 0.0f);
      auto vm = zt::simd::load_tail<S>(m + i, k, 0.0f), vv = zt::simd::load_tail<S>(v + i, k, 1.0f);
      lamb_moments_vec<S>(zt::simd::load_tail<S>(g + i, k, 0.0f), vm, vv, a);
      zt::simd::store_tail<S>(m + i, vm, k);
      zt::simd::store_tail<S>(v + i, vv, k);
      lamb_add_squares<S>(acc_p, vp, k);
      lamb_add_squares<S>(acc_u, lamb_update_vec<S>(vp, vm, vv, a), k);
    }
    partial[static_cast<size_t>(2 * c)] = lamb_lane_total(acc_p);
    partial[static_cast<size_t>(2 * c + 1)] = lamb_lane_total(acc_u);
  }
  for (int64_t c = 0; c < nchunks; ++c) {
    sums->param_sq += partial[static_cast<size_t>(2 * c)];
    sums->update_sq += partial[static_cast<size_t>(2 * c + 1)];
  }
}

template <class S>
void lamb_apply_impl(float* p, const float* m, const float* v, int64_t n, const zt::LambArgs& a,
                     const zt::LambSums* sums) {
  const int64_t nchunks = (n + kLambChunk - 1) / kLambChunk;
  const float neg_step = zt::lamb_neg_step(*sums, a);
#pragma omp parallel for schedule(static)
  for (int64_t c = 0; c < nchunks; ++c) {
    const int64_t lo = c * kLambChunk, hi = (lo + kLambChunk < n) ? lo + kLambChunk : n;
    int64_t i = lo;
    for (; i + S::kWidth <= hi; i += S::kWidth) {
      const auto vp = S::load(p + i);
      const auto u = lamb_update_vec<S>(vp, S::load(m + i), S::load(v + i), a);
      S::store(p + i, S::add(vp, S::mul(S::set1(neg_step), u)));
    }
    if (i < hi) {
      const int k = static_cast<int>(hi - i);
      const auto vp = zt::simd::load_tail<S>(p + i, k, 0.0f);
      const auto u = lamb_update_vec<S>(vp, zt::simd::load_tail<S>(m + i, k, 0.0f),
                                        zt::simd::load_tail<S>(v + i, k, 1.0f), a);
      zt::simd::store_tail<S>(p + i, S::add(vp, S::mul(S::set1(neg_step), u)), k);
    }
  }
}
