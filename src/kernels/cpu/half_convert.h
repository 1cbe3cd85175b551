// Conversions between fp32 and the two 16-bit storage formats of the mixed-precision
// kernel tables: bf16 (the high half of an IEEE float) and f16 (IEEE binary16).
//
// Invariants: widening is exact (every 16-bit value is an fp32 value); narrowing rounds to
// nearest, ties to even; NaN stays NaN (made quiet, sign and top payload bits kept);
// f16 overflows to +-inf from |x| >= 65520 (the midpoint above 65504, which ties away to
// the even neighbour inf), and f16 subnormals (2^-24 steps below 2^-14) are rounded
// correctly. The bulk f16 loops use F16C where the CPU has it and ZT_ISA is not scalar;
// both paths give identical bits (half_convert_test.cc checks every f16 pattern).
// Thread-safety: pure functions; the bulk loops parallelise internally (OpenMP).
#pragma once

#include <cstdint>
#include <cstring>

#include "backend/dtype.h"
#include "kernels/cpu/elementwise.h"

namespace zt {

// One f16 value widened (exact; a signalling NaN comes back quiet, as F16C does).
inline float f16_bits_to_f32(f16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  uint32_t u;
  if (e == 0x1f) {
    u = sign | 0x7f800000u | (m != 0 ? (m | 0x200u) << 13 : 0u);  // inf, or quiet NaN
  } else if (e != 0) {
    u = sign | ((e + 112u) << 23) | (m << 13);  // rebias 15 -> 127
  } else if (m == 0) {
    u = sign;
  } else {  // subnormal m * 2^-24: the leading bit p of m becomes the implicit one
    const int p = 31 - __builtin_clz(m);
    u = sign | (static_cast<uint32_t>(p + 103) << 23) | ((m << (23 - p)) & 0x7fffffu);
  }
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// One fp32 value rounded to f16 (nearest even; see the file comment).
inline f16_t f32_to_f16_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  const uint32_t sign = (u >> 16) & 0x8000u, a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return static_cast<f16_t>(sign | 0x7e00u | ((a >> 13) & 0x3ffu));  // NaN
  if (a >= 0x477ff000u) return static_cast<f16_t>(sign | 0x7c00u);                       // >= 65520: inf
  if (a >= 0x38800000u) {  // normal (>= 2^-14): rebias 127 -> 15, round the 13 dropped bits
    const uint32_t r = a - 0x38000000u;
    return static_cast<f16_t>(sign | ((r + 0xfffu + ((r >> 13) & 1u)) >> 13));
  }
  if (a <= 0x33000000u) return static_cast<f16_t>(sign);  // <= 2^-25 (the tie) rounds to 0
  // Subnormal: k = m * 2^(e - 150) / 2^-24 = m >> (126 - e), shift in [14, 24].
  const uint32_t m = (a & 0x7fffffu) | 0x800000u;
  const int shift = 126 - static_cast<int>(a >> 23);
  const uint32_t k = m >> shift, rem = m & ((1u << shift) - 1u), half = 1u << (shift - 1);
  return static_cast<f16_t>(sign | (k + ((rem > half || (rem == half && (k & 1u))) ? 1u : 0u)));
}

// Bulk conversions, n elements each. The bf16 pair is the elementwise.h casts.
inline void bf16_to_f32(float* dst, const bf16_t* src, int64_t n) { cast_bf16_to_f32(dst, src, n); }
inline void f32_to_bf16(bf16_t* dst, const float* src, int64_t n) { cast_f32_to_bf16(dst, src, n); }
void f16_to_f32(float* dst, const f16_t* src, int64_t n);
void f32_to_f16(f16_t* dst, const float* src, int64_t n);

// The pair for a table's compute dtype (kBF16 or kF16; kF32 aborts).
void half_to_f32(DType compute, float* dst, const half_t* src, int64_t n);
void f32_to_half(DType compute, half_t* dst, const float* src, int64_t n);

// Whether f16_to_f32 / f32_to_f16 run on F16C here (tests report it).
bool f16_uses_f16c();

}  // namespace zt
