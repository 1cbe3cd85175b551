// SwiGLU (Llama's MLP activation), elementwise, templated on an ISA struct S; included
// inside a per-ISA namespace. out = silu(g) * u with silu(g) = g * s, s = sigmoid(g) =
// 1 / (1 + exp(-g)) (vexp clamps its argument, so s is never NaN: g = -100 gives s ~ 4e-39).
// Backward: dgate = dout * u * s (1 + g (1 - s)) (silu's derivative), dup = dout * g * s.
#pragma once

#include <cstdint>

#include "kernels/cpu/simd/tail.h"
#include "kernels/cpu/simd/vmath.h"

template <class S>
static inline typename S::V swiglu_sigmoid(typename S::V g) {
  const auto e = zt::simd::vexp<S>(S::sub(S::zero(), g));
  return S::div(S::set1(1.0f), S::add(S::set1(1.0f), e));
}

template <class S>
static inline typename S::V swiglu_value(typename S::V g, typename S::V u) {
  return S::mul(S::mul(g, swiglu_sigmoid<S>(g)), u);
}

template <class S>
void swiglu_forward_impl(float* out, const float* gate, const float* up, int64_t n) {
  constexpr int64_t kChunk = 4096;
  const int64_t nchunks = (n + kChunk - 1) / kChunk;
#pragma omp parallel for schedule(static)
  for (int64_t c = 0; c < nchunks; ++c) {
    const int64_t lo = c * kChunk, hi = (lo + kChunk < n) ? lo + kChunk : n;
    int64_t i = lo;
    for (; i + S::kWidth <= hi; i += S::kWidth) S::store(out + i, swiglu_value<S>(S::load(gate + i), S::load(up + i)));
    if (i < hi) {
      const int k = static_cast<int>(hi - i);
      const auto y = swiglu_value<S>(zt::simd::load_tail<S>(gate + i, k, 0.0f), zt::simd::load_tail<S>(up + i, k, 0.0f));
      zt::simd::store_tail<S>(out + i, y, k);
    }
  }
}

// One vector of the backward: every input is loaded before either output is stored, so
// dgate and dup may alias dout, gate or up element for element.
template <class S>
static inline void swiglu_grad(typename S::V dy, typename S::V g, typename S::V u, typename S::V* dg,
                               typename S::V* du) {
  using V = typename S::V;
  const V s = swiglu_sigmoid<S>(g);
  const V one = S::set1(1.0f);
  const V dsilu = S::mul(s, S::fmadd(g, S::sub(one, s), one));  // s (1 + g (1 - s))
  *dg = S::mul(S::mul(dy, u), dsilu);
  *du = S::mul(dy, S::mul(g, s));
}

template <class S>
void swiglu_backward_impl(float* dgate, float* dup, const float* dout, const float* gate, const float* up,
                          int64_t n) {
  using V = typename S::V;
  constexpr int64_t kChunk = 4096;
  const int64_t nchunks = (n + kChunk - 1) / kChunk;
#pragma omp parallel for schedule(static)
  for (int64_t c = 0; c < nchunks; ++c) {
    const int64_t lo = c * kChunk, hi = (lo + kChunk < n) ? lo + kChunk : n;
    int64_t i = lo;
    V dg, du;
    for (; i + S::kWidth <= hi; i += S::kWidth) {
      swiglu_grad<S>(S::load(dout + i), S::load(gate + i), S::load(up + i), &dg, &du);
      S::store(dgate + i, dg);
      S::store(dup + i, du);
    }
    if (i < hi) {
      const int k = static_cast<int>(hi - i);
      swiglu_grad<S>(zt::simd::load_tail<S>(dout + i, k, 0.0f), zt::simd::load_tail<S>(gate + i, k, 0.0f),
                     zt::simd::load_tail<S>(up + i, k, 0.0f), &dg, &du);
      zt::simd::store_tail<S>(dgate + i, dg, k);
      zt::simd::store_tail<S>(dup + i, du, k);
    }
  }
}
