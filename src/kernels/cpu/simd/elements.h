// Loads and stores of a kernel's elements as fp32 vectors, for kernels written once over
// an element type T: float, or uint16_t holding bf16 bit patterns (the bf16 table's
// kernels read and write their 16-bit activations directly, widening and narrowing in
// registers instead of through an fp32 copy of the chunk).
//   load<S>(p), store<S>(p, x)                 a whole vector
//   load_tail<S>(p, count, fill), store_tail   the last count < kWidth elements (tail.h for fp32)
//   convert<S>(dst, src, n)                    n elements from one type into the other
//   convert_rows<S>(dst, ldd, src, lds, rows, cols)   the same over rows of a strided block
//   value(e), store_value(p, x)                one element, widened or narrowed
// Invariants: widening is exact and narrowing is core/half_bits.h's f32_to_bf16_bits on
// every lane (nearest even, NaN made quiet), whatever the ISA, so a kernel over bf16
// gives bit for bit round(the same kernel over the widened fp32 values).
// Thread-safety: pure functions.
#pragma once

#include <cstdint>

#include "core/half_bits.h"
#include "kernels/cpu/simd/tail.h"

namespace zt::simd {

template <class S>
inline typename S::V load(const float* p) {
  return S::load(p);
}
template <class S>
inline typename S::V load(const uint16_t* p) {
  return S::load_bf16(p);
}
template <class S>
inline void store(float* p, typename S::V x) {
  S::store(p, x);
}
template <class S>
inline void store(uint16_t* p, typename S::V x) {
  S::store_bf16(p, x);
}

inline float value(float e) { return e; }
inline float value(uint16_t e) { return bf16_bits_to_f32(e); }
inline void store_value(float* p, float x) { *p = x; }
inline void store_value(uint16_t* p, float x) { *p = f32_to_bf16_bits(x); }

// The padding lanes hold fill (an fp32 value, not rounded to bf16).
template <class S>
inline typename S::V load_tail(const uint16_t* p, int count, float fill) {
  alignas(64) float tmp[S::kWidth];
  for (int i = 0; i < S::kWidth; ++i) tmp[i] = i < count ? bf16_bits_to_f32(p[i]) : fill;
  return S::load(tmp);
}

template <class S>
inline void store_tail(uint16_t* p, typename S::V x, int count) {
  alignas(64) float tmp[S::kWidth];
  S::store(tmp, x);
  for (int i = 0; i < count; ++i) p[i] = f32_to_bf16_bits(tmp[i]);
}

// One thread's widening or narrowing of n elements (a kernel's fp32 copy of a chunk).
template <class S, class To, class From>
void convert(To* dst, const From* src, int64_t n) {
  int64_t i = 0;
  for (; i + S::kWidth <= n; i += S::kWidth) store<S>(dst + i, load<S>(src + i));
  if (i < n) {
    const int k = static_cast<int>(n - i);
    store_tail<S>(dst + i, load_tail<S>(src + i, k, 0.0f), k);
  }
}

// convert over `rows` rows of `cols` elements, the rows lds apart in src and ldd apart in
// dst (one head's slice of an activation, widened into a dense block or narrowed back).
template <class S, class To, class From>
void convert_rows(To* dst, int64_t ldd, const From* src, int64_t lds, int rows, int cols) {
  for (int r = 0; r < rows; ++r) convert<S>(dst + r * ldd, src + r * lds, cols);
}

}  // namespace zt::simd
