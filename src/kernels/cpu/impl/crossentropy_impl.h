// Fused, numerically stable softmax cross-entropy over rows of logits. A row has Vp
// entries of which the first V are real classes (Vp > V is vocabulary padding, which
// never takes part); target -1 means "ignore this row": loss 0, gradient 0.
// Forward keeps the logits and saves, per row, the max m and log(sum exp(l - m)) (two
// floats, so probabilities are exp((l - m) - logsum) without rounding l - lse at the
// magnitude of the logits); backward recomputes the probabilities from them, writing
// dlogits (which may alias logits).
#pragma once

#include <cmath>
#include <cstdint>

#include "kernels/cpu/simd/tail.h"
#include "kernels/cpu/simd/vmath.h"

template <class S>
void crossentropy_forward_impl(float* losses, float* stats, const float* logits, const int32_t* targets,
                               int64_t N, int V, int Vp) {
  using Vec = typename S::V;
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < N; ++r) {
    const float* row = logits + r * Vp;
    const int32_t t = targets[r];
    if (t < 0) {
      losses[r] = 0.0f;
      stats[2 * r] = 0.0f;
      stats[2 * r + 1] = 0.0f;
      continue;
    }
    Vec vmax = S::set1(-INFINITY);
    int i = 0;
    for (; i + S::kWidth <= V; i += S::kWidth) vmax = S::max(vmax, S::load(row + i));
    if (i < V) vmax = S::max(vmax, zt::simd::load_tail<S>(row + i, V - i, -INFINITY));
    const float m = S::reduce_max(vmax);
    const Vec vm = S::set1(m);
    Vec acc = S::zero();
    i = 0;
    for (; i + S::kWidth <= V; i += S::kWidth) acc = S::add(acc, zt::simd::vexp<S>(S::sub(S::load(row + i), vm)));
    if (i < V) {  // padding lanes hold -inf: exp underflows to ~1e-38, below any sum's ulp
      acc = S::add(acc, zt::simd::vexp<S>(S::sub(zt::simd::load_tail<S>(row + i, V - i, -INFINITY), vm)));
    }
    const float sum = S::reduce_add(acc);
    const float logsum = static_cast<float>(std::log(static_cast<double>(sum)));
    stats[2 * r] = m;
    stats[2 * r + 1] = logsum;
    losses[r] = (m - row[t]) + logsum;
  }
}

template <class S>
void crossentropy_backward_impl(float* dlogits, const float* logits, const float* stats,
                                const int32_t* targets, float dloss, int64_t N, int V, int Vp) {
  using Vec = typename S::V;
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < N; ++r) {
    const float* row = logits + r * Vp;
    float* drow = dlogits + r * Vp;
    const int32_t t = targets[r];
    if (t < 0) {
      for (int j = 0; j < Vp; ++j) drow[j] = 0.0f;
      continue;
    }
    const Vec vm = S::set1(stats[2 * r]);
    const Vec vl = S::set1(stats[2 * r + 1]);
    const Vec vd = S::set1(dloss);
    int i = 0;
    for (; i + S::kWidth <= V; i += S::kWidth) {
      S::store(drow + i, S::mul(zt::simd::vexp<S>(S::sub(S::sub(S::load(row + i), vm), vl)), vd));
    }
    if (i < V) {
      const int k = V - i;
      const Vec p = zt::simd::vexp<S>(S::sub(S::sub(zt::simd::load_tail<S>(row + i, k, 0.0f), vm), vl));
      zt::simd::store_tail<S>(drow + i, S::mul(p, vd), k);
    }
    drow[t] -= dloss;
    for (int j = V; j < Vp; ++j) drow[j] = 0.0f;
  }
}

// Row pieces for the vocabulary-parallel cross-entropy (kernels/cpu/vocab_parallel_kernels.cc):
// the max of n entries (-inf for n == 0), the sum of exp(x - m), and the gradient
// d = (exp(x - m - logsum) - 0) * scale written over n entries.
template <class S>
float row_max_impl(const float* x, int n) {
  using Vec = typename S::V;
  Vec vmax = S::set1(-INFINITY);
  int i = 0;
  for (; i + S::kWidth <= n; i += S::kWidth) vmax = S::max(vmax, S::load(x + i));
  if (i < n) vmax = S::max(vmax, zt::simd::load_tail<S>(x + i, n - i, -INFINITY));
  return S::reduce_max(vmax);
}

template <class S>
float row_sum_exp_impl(const float* x, int n, float m) {
  using Vec = typename S::V;
  const Vec vm = S::set1(m);
  Vec acc = S::zero();
  int i = 0;
  for (; i + S::kWidth <= n; i += S::kWidth) acc = S::add(acc, zt::simd::vexp<S>(S::sub(S::load(x + i), vm)));
  if (i < n) acc = S::add(acc, zt::simd::vexp<S>(S::sub(zt::simd::load_tail<S>(x + i, n - i, -INFINITY), vm)));
  return S::reduce_add(acc);
}

template <class S>
void row_softmax_scaled_impl(float* d, const float* x, int n, float m, float logsum, float scale) {
  using Vec = typename S::V;
  const Vec vm = S::set1(m), vl = S::set1(logsum), vs = S::set1(scale);
  int i = 0;
  for (; i + S::kWidth <= n; i += S::kWidth) {
    S::store(d + i, S::mul(zt::simd::vexp<S>(S::sub(S::sub(S::load(x + i), vm), vl)), vs));
  }
  if (i < n) {
    const Vec p = zt::simd::vexp<S>(S::sub(S::sub(zt::simd::load_tail<S>(x + i, n - i, 0.0f), vm), vl));
    zt::simd::store_tail<S>(d + i, S::mul(p, vs), n - i);
  }
}
