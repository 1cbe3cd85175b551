// Portable "ISA": the reference every SIMD path is tested against, and the fallback on
// CPUs without AVX2. Plain C++ on 8-float arrays (the compiler may use SSE2 for them),
// with the same interface as isa_avx2.h / isa_avx512.h (ggml's simd-mappings idea):
// kernels are templates over one of these structs. Eight lanes, like AVX2, so long
// reductions keep eight partial sums instead of one (a single running float sum over a
// 50k-entry vocabulary row loses ~1e-6 relative). fmadd is not fused here.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "core/half_bits.h"

namespace zt::simd {

struct IsaScalar {
  static constexpr int kWidth = 8;
  struct V {
    float v[kWidth];
  };
  template <class F>
  static V map(F f) {
    V r;
    for (int i = 0; i < kWidth; ++i) r.v[i] = f(i);
    return r;
  }
  static V load(const float* p) {
    V r;
    std::memcpy(r.v, p, sizeof(r.v));
    return r;
  }
  static void store(float* p, V x) { std::memcpy(p, x.v, sizeof(x.v)); }
  static V set1(float x) { return map([&](int) { return x; }); }
  static V zero() { return set1(0.0f); }
  static V add(V a, V b) { return map([&](int i) { return a.v[i] + b.v[i]; }); }
  static V sub(V a, V b) { return map([&](int i) { return a.v[i] - b.v[i]; }); }
  static V mul(V a, V b) { return map([&](int i) { return a.v[i] * b.v[i]; }); }
  static V div(V a, V b) { return map([&](int i) { return a.v[i] / b.v[i]; }); }
  static V fmadd(V a, V b, V c) { return map([&](int i) { return a.v[i] * b.v[i] + c.v[i]; }); }
  static V max(V a, V b) { return map([&](int i) { return a.v[i] > b.v[i] ? a.v[i] : b.v[i]; }); }
  static V min(V a, V b) { return map([&](int i) { return a.v[i] < b.v[i] ? a.v[i] : b.v[i]; }); }
  static V sqrt(V a) { return map([&](int i) { return std::sqrt(a.v[i]); }); }
  // Same halving tree as IsaAvx2::reduce_add.
  static float reduce_add(V a) {
    float s4[4], s2[2];
    for (int i = 0; i < 4; ++i) s4[i] = a.v[i] + a.v[i + 4];
    s2[0] = s4[0] + s4[2];
    s2[1] = s4[1] + s4[3];
    return s2[0] + s2[1];
  }
  static float reduce_max(V a) {
    float m = a.v[0];
    for (int i = 1; i < kWidth; ++i) m = a.v[i] > m ? a.v[i] : m;
    return m;
  }
  static V round_nearest(V a) { return map([&](int i) { return std::nearbyint(a.v[i]); }); }
  // bf16 bit patterns, by core/half_bits.h's conversions (the reference of the SIMD forms).
  static V load_bf16(const uint16_t* p) { return map([&](int i) { return bf16_bits_to_f32(p[i]); }); }
  static void store_bf16(uint16_t* p, V x) {
    for (int i = 0; i < kWidth; ++i) p[i] = f32_to_bf16_bits(x.v[i]);
  }
  // 2^n for integer-valued floats n in [-126, 127].
  static V pow2i(V n) {
    return map([&](int i) {
      const uint32_t bits = static_cast<uint32_t>(static_cast<int32_t>(n.v[i]) + 127) << 23;
      float out;
      std::memcpy(&out, &bits, sizeof(out));
      return out;
    });
  }
};

}  // namespace zt::simd
