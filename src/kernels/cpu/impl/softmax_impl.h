// Causal softmax for one attention head's T x T score block, and its backward.
// Row i covers keys j in [0, i]; entries j > i are written as exact zeros. Called from
// inside the per-head parallel loop of attention.cc, so no OpenMP here.
#pragma once

#include <cmath>

#include "kernels/cpu/simd/tail.h"
#include "kernels/cpu/simd/vmath.h"

template <class S>
void attention_softmax_forward_impl(float* P, int T) {
  using V = typename S::V;
  for (int r = 0; r < T; ++r) {
    float* row = P + static_cast<int64_t>(r) * T;
    const int len = r + 1;
    V vmax = S::set1(-INFINITY);
    int i = 0;
    for (; i + S::kWidth <= len; i += S::kWidth) vmax = S::max(vmax, S::load(row + i));
    if (i < len) vmax = S::max(vmax, zt::simd::load_tail<S>(row + i, len - i, -INFINITY));
    const V m = S::set1(S::reduce_max(vmax));
    V acc = S::zero();
    i = 0;
    for (; i + S::kWidth <= len; i += S::kWidth) {
      const V e = zt::simd::vexp<S>(S::sub(S::load(row + i), m));
      S::store(row + i, e);
      acc = S::add(acc, e);
    }
    if (i < len) {
      const int k = len - i;
      zt::simd::store_tail<S>(row + i, zt::simd::vexp<S>(S::sub(zt::simd::load_tail<S>(row + i, k, 0.0f), m)), k);
      acc = S::add(acc, zt::simd::load_tail<S>(row + i, k, 0.0f));
    }
    const V inv = S::set1(1.0f / S::reduce_add(acc));
    i = 0;
    for (; i + S::kWidth <= len; i += S::kWidth) S::store(row + i, S::mul(S::load(row + i), inv));
    if (i < len) {
      const int k = len - i;
      zt::simd::store_tail<S>(row + i, S::mul(zt::simd::load_tail<S>(row + i, k, 0.0f), inv), k);
    }
    for (int j = len; j < T; ++j) row[j] = 0.0f;
  }
}

// In place: dS = scale * P o (dP - rowsum(dP o P)) on the causal part, zero elsewhere.
template <class S>
void attention_softmax_backward_impl(float* dP, const float* P, int T, float scale) {
  using V = typename S::V;
  for (int r = 0; r < T; ++r) {
    float* d = dP + static_cast<int64_t>(r) * T;
    const float* p = P + static_cast<int64_t>(r) * T;
    const int len = r + 1;
    V acc = S::zero();
    int i = 0;
    for (; i + S::kWidth <= len; i += S::kWidth) acc = S::fmadd(S::load(d + i), S::load(p + i), acc);
    if (i < len) {
      const int k = len - i;
      acc = S::fmadd(zt::simd::load_tail<S>(d + i, k, 0.0f), zt::simd::load_tail<S>(p + i, k, 0.0f), acc);
    }
    const V dot = S::set1(S::reduce_add(acc));
    const V vs = S::set1(scale);
    i = 0;
    for (; i + S::kWidth <= len; i += S::kWidth) {
      S::store(d + i, S::mul(S::mul(S::load(p + i), S::sub(S::load(d + i), dot)), vs));
    }
    if (i < len) {
      const int k = len - i;
      const V g = S::mul(S::mul(zt::simd::load_tail<S>(p + i, k, 0.0f), S::sub(zt::simd::load_tail<S>(d + i, k, 0.0f), dot)), vs);
      zt::simd::store_tail<S>(d + i, g, k);
    }
    for (int j = len; j < T; ++j) d[j] = 0.0f;
  }
}
