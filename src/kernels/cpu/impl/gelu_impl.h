// GELU, tanh form as in GPT-2: y = 0.5 x (1 + tanh(u)), u = sqrt(2/pi) (x + 0.044715 x^3).
// Evaluated as y = x * sigmoid(2u), the same function without the cancellation in
// 1 + tanh(u) for negative u; the derivative is sigmoid(2u) + 2 x s (1 - s) du/dx.
// Templated on an ISA struct S; included inside a per-ISA namespace.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "kernels/cpu/simd/elements.h"
#include "kernels/cpu/simd/vmath.h"

// sigmoid(2u) = 1 / (1 + exp(-2u)).
template <class S>
static inline typename S::V gelu_sigmoid(typename S::V x, typename S::V x2) {
  const auto u = S::mul(S::set1(0.7978845608028654f), S::fmadd(S::mul(S::set1(0.044715f), x2), x, x));
  const auto e = zt::simd::vexp<S>(S::mul(S::set1(-2.0f), u));
  return S::div(S::set1(1.0f), S::add(S::set1(1.0f), e));
}

template <class S>
static inline typename S::V gelu_value(typename S::V x) {
  return S::mul(x, gelu_sigmoid<S>(x, S::mul(x, x)));
}

// gelu'(x), which the backward multiplies by dout.
template <class S>
static inline typename S::V gelu_slope(typename S::V x) {
  using V = typename S::V;
  const V x2 = S::mul(x, x);
  const V s = gelu_sigmoid<S>(x, x2);
  const V du = S::mul(S::set1(0.7978845608028654f), S::fmadd(S::set1(3.0f * 0.044715f), x2, S::set1(1.0f)));
  const V ds = S::mul(S::mul(S::set1(2.0f), S::mul(s, S::sub(S::set1(1.0f), s))), du);  // d sigmoid(2u)/dx
  return S::fmadd(x, ds, s);
}

template <class S>
static inline typename S::V gelu_grad(typename S::V x, typename S::V dy) {
  return S::mul(gelu_slope<S>(x), dy);
}

// One thread's GELU over n elements (out may alias inp).
template <class S>
void gelu_forward_range(float* out, const float* inp, int64_t n) {
  int64_t i = 0;
  for (; i + S::kWidth <= n; i += S::kWidth) S::store(out + i, gelu_value<S>(S::load(inp + i)));
  if (i < n) {
    const int k = static_cast<int>(n - i);
    zt::simd::store_tail<S>(out + i, gelu_value<S>(zt::simd::load_tail<S>(inp + i, k, 0.0f)), k);
  }
}

// One thread's dinp = gelu'(inp) * dout over n elements (dinp may alias dout).
template <class S>
void gelu_backward_range(float* dinp, const float* inp, const float* dout, int64_t n) {
  int64_t i = 0;
  for (; i + S::kWidth <= n; i += S::kWidth) S::store(dinp + i, gelu_grad<S>(S::load(inp + i), S::load(dout + i)));
  if (i < n) {
    const int k = static_cast<int>(n - i);
    const auto g = gelu_grad<S>(zt::simd::load_tail<S>(inp + i, k, 0.0f), zt::simd::load_tail<S>(dout + i, k, 0.0f));
    zt::simd::store_tail<S>(dinp + i, g, k);
  }
}

constexpr int64_t kGeluChunk = 4096;

template <class S>
void gelu_forward_impl(float* out, const float* inp, int64_t n) {
  const int64_t nchunks = (n + kGeluChunk - 1) / kGeluChunk;
#pragma omp parallel for schedule(static)
  for (int64_t c = 0; c < nchunks; ++c) {
    const int64_t lo = c * kGeluChunk;
    gelu_forward_range<S>(out + lo, inp + lo, lo + kGeluChunk < n ? kGeluChunk : n - lo);
  }
}

// dinp = gelu'(inp) * dout; dinp may alias dout.
template <class S>
void gelu_backward_impl(float* dinp, const float* inp, const float* dout, int64_t n) {
  const int64_t nchunks = (n + kGeluChunk - 1) / kGeluChunk;
#pragma omp parallel for schedule(static)
  for (int64_t c = 0; c < nchunks; ++c) {
    const int64_t lo = c * kGeluChunk;
    gelu_backward_range<S>(dinp + lo, inp + lo, dout + lo, lo + kGeluChunk < n ? kGeluChunk : n - lo);
  }
}

// The bf16 forms. A bf16 input is one of 65,536 bit patterns, so GELU's rounded output and
// its slope gelu'(x) are tables indexed by the pattern, filled once per ISA by the fp32
// arithmetic above on every widened pattern: the forward is a lookup, the backward
// narrow(slope[x] * dout), bit for bit the fp32 kernel on the widened inputs rounded once
// (its last operation is that same multiply). 384 KiB, held in L2; the arithmetic they
// replace is GELU's whole cost (an exp and a divide per element). Scalar lookups: AVX-512's
// gathers measured slower on Zen 5 (and Intel's are slower still since the Downfall fix).
struct GeluBf16Tables {
  uint16_t value[65536];
  float slope[65536];
};

template <class S>
const GeluBf16Tables& gelu_bf16_tables() {
  static const std::unique_ptr<GeluBf16Tables> tables = [] {
    auto t = std::make_unique<GeluBf16Tables>();
    std::vector<float> x(65536), y(65536);
    for (int i = 0; i < 65536; ++i) x[i] = zt::simd::value(static_cast<uint16_t>(i));
    gelu_forward_range<S>(y.data(), x.data(), 65536);
    for (int i = 0; i < 65536; i += S::kWidth) {
      zt::simd::store<S>(t->value + i, S::load(y.data() + i));
      S::store(t->slope + i, gelu_slope<S>(S::load(x.data() + i)));
    }
    return t;
  }();
  return *tables;
}

template <class S>
void gelu_forward_bf16_impl(uint16_t* out, const uint16_t* inp, int64_t n) {
  const uint16_t* value = gelu_bf16_tables<S>().value;
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) out[i] = value[inp[i]];
}

// dinp may alias dout.
template <class S>
void gelu_backward_bf16_impl(uint16_t* dinp, const uint16_t* inp, const uint16_t* dout, int64_t n) {
  const float* slope = gelu_bf16_tables<S>().slope;
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) zt::simd::store_value(dinp + i, slope[inp[i]] * zt::simd::value(dout[i]));
}
