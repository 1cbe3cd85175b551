// Fused, numerically stable softmax cross-entropy over rows of logits. A row has Vp
// entries of which the first V are real classes (Vp > V is vocabulary padding, which
// never takes part); target -1 means "ignore this row": loss 0, gradient 0.
// Forward keeps the logits and saves, per row, the max m and log(sum exp(l - m)) (two
// floats, so probabilities are exp((l - m) - logsum) without rounding l - lse at the
// magnitude of the logits); backward recomputes the probabilities from them, writing
// dlogits (which may alias logits).
// Templated on an ISA struct S and on the logits' element type T: float, or uint16_t for
// bf16 (simd/elements.h: widened in registers, each gradient rounded once), so the bf16
// forms give bit for bit the fp32 kernel's results on the widened logits, rounded.
#pragma once

#include <cmath>
#include <cstdint>

#include "kernels/cpu/simd/elements.h"
#include "kernels/cpu/simd/vmath.h"

// Row pieces, also the vocabulary-parallel cross-entropy's (kernels/cpu/vocab_parallel_kernels.cc):
// the max of n entries (-inf for n == 0), the sum of exp(x - m), and the gradient
// d = (exp(x - m - logsum) - 0) * scale written over n entries (d may alias x).
template <class S, class T>
float row_max_impl(const T* x, int n) {
  using Vec = typename S::V;
  Vec vmax = S::set1(-INFINITY);
  int i = 0;
  for (; i + S::kWidth <= n; i += S::kWidth) vmax = S::max(vmax, zt::simd::load<S>(x + i));
  if (i < n) vmax = S::max(vmax, zt::simd::load_tail<S>(x + i, n - i, -INFINITY));
  return S::reduce_max(vmax);
}

// Padding lanes hold -inf: exp underflows to ~1e-38, below any sum's ulp. While the
// exponentials keep the core busy, the n entries at `next` (the next row, or null) are
// prefetched into L2, so the next row's max pass (bound by memory) finds them there: GPT-2
// small's forward over 1024 x 50304 fp32 logits 11.0 -> 8.1 ms (2 threads, Zen 5). The
// backward's one pass, already as fast as memory allows, gained nothing from the same.
template <class S, class T>
float row_sum_exp_prefetching(const T* x, int n, float m, const T* next) {
  using Vec = typename S::V;
  const Vec vm = S::set1(m);
  Vec acc = S::zero();
  int i = 0;
  for (; i + S::kWidth <= n; i += S::kWidth) {
    if (next != nullptr) __builtin_prefetch(next + i, 0, 2);
    acc = S::add(acc, zt::simd::vexp<S>(S::sub(zt::simd::load<S>(x + i), vm)));
  }
  if (i < n) acc = S::add(acc, zt::simd::vexp<S>(S::sub(zt::simd::load_tail<S>(x + i, n - i, -INFINITY), vm)));
  return S::reduce_add(acc);
}

template <class S, class T>
float row_sum_exp_impl(const T* x, int n, float m) {
  return row_sum_exp_prefetching<S>(x, n, m, static_cast<const T*>(nullptr));
}

// The probability times scale, for every lane of x.
template <class S>
typename S::V softmax_scaled(typename S::V x, typename S::V vm, typename S::V vl, typename S::V vs) {
  return S::mul(zt::simd::vexp<S>(S::sub(S::sub(x, vm), vl)), vs);
}

template <class S, class T>
void row_softmax_scaled_impl(T* d, const T* x, int n, float m, float logsum, float scale) {
  using Vec = typename S::V;
  const Vec vm = S::set1(m), vl = S::set1(logsum), vs = S::set1(scale);
  int i = 0;
  for (; i + S::kWidth <= n; i += S::kWidth) zt::simd::store<S>(d + i, softmax_scaled<S>(zt::simd::load<S>(x + i), vm, vl, vs));
  if (i < n) {
    const Vec p = softmax_scaled<S>(zt::simd::load_tail<S>(x + i, n - i, 0.0f), vm, vl, vs);
    zt::simd::store_tail<S>(d + i, p, n - i);
  }
}

template <class S, class T>
void crossentropy_forward_impl(float* losses, float* stats, const T* logits, const int32_t* targets, int64_t N,
                               int V, int Vp) {
  // Only while this row and the next fit in half of a core's L2 (measured at run time): a
  // larger vocabulary's next row would push out the row being summed.
  static const int64_t l2 = zt::l2_cache_bytes();
  const bool prefetch = 2 * int64_t{Vp} * int64_t{sizeof(T)} <= l2 / 2;
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < N; ++r) {
    const T* row = logits + r * Vp;
    const int32_t t = targets[r];
    if (t < 0) {
      losses[r] = 0.0f;
      stats[2 * r] = 0.0f;
      stats[2 * r + 1] = 0.0f;
      continue;
    }
    const float m = row_max_impl<S>(row, V);
    const T* next = prefetch && r + 1 < N ? row + Vp : nullptr;
    const float logsum = static_cast<float>(std::log(static_cast<double>(row_sum_exp_prefetching<S>(row, V, m, next))));
    stats[2 * r] = m;
    stats[2 * r + 1] = logsum;
    losses[r] = (m - zt::simd::value(row[t])) + logsum;
  }
}

// The target's entry is its probability times dloss, less dloss, rounded once: computed
// from the target's logit (read before the row is overwritten) by the same lane arithmetic.
template <class S, class T>
void crossentropy_backward_impl(T* dlogits, const T* logits, const float* stats, const int32_t* targets, float dloss,
                                int64_t N, int V, int Vp) {
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < N; ++r) {
    const T* row = logits + r * Vp;
    T* drow = dlogits + r * Vp;
    const int32_t t = targets[r];
    if (t < 0) {
      for (int j = 0; j < Vp; ++j) drow[j] = T{};
      continue;
    }
    const float m = stats[2 * r], logsum = stats[2 * r + 1];
    const float xt = zt::simd::value(row[t]);
    row_softmax_scaled_impl<S>(drow, row, V, m, logsum, dloss);
    alignas(64) float pt[S::kWidth];
    S::store(pt, softmax_scaled<S>(S::set1(xt), S::set1(m), S::set1(logsum), S::set1(dloss)));
    zt::simd::store_value(drow + t, pt[0] - dloss);
    for (int j = V; j < Vp; ++j) drow[j] = T{};
  }
}
