// The one definition of the conversions between fp32 and the 16-bit storage formats,
// bf16 (the high half of an IEEE float) and f16 (IEEE binary16), for the CPU and for CUDA
// device code alike (ZT_HOST_DEVICE): integer arithmetic on the bit patterns, so no
// rounding mode, flush-to-zero or NaN canonicalisation of either machine's conversion
// instructions can make the two differ.
// Invariants: widening is exact (a signalling NaN comes back quiet, as F16C does);
// narrowing rounds to nearest, ties to even; NaN stays NaN (made quiet, sign and top
// payload bits kept); f16 overflows to +-inf from |x| >= 65520 (the midpoint above 65504,
// which ties away to the even neighbour inf); f16 subnormals (2^-24 steps below 2^-14)
// round correctly.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <cstring>

#include "core/host_device.h"

namespace zt {

ZT_HOST_DEVICE uint32_t float_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

ZT_HOST_DEVICE float bits_float(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// Index of the highest set bit of m (m != 0).
ZT_HOST_DEVICE int highest_bit(uint32_t m) {
#ifdef __CUDA_ARCH__
  return 31 - __clz(m);
#else
  return 31 - __builtin_clz(m);
#endif
}

ZT_HOST_DEVICE float bf16_bits_to_f32(uint16_t h) { return bits_float(static_cast<uint32_t>(h) << 16); }

ZT_HOST_DEVICE uint16_t f32_to_bf16_bits(float f) {
  const uint32_t u = float_bits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40u);  // quiet NaN, sign kept
  return static_cast<uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

ZT_HOST_DEVICE float f16_bits_to_f32(uint16_t h) {
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
    const int p = highest_bit(m);
    u = sign | (static_cast<uint32_t>(p + 103) << 23) | ((m << (23 - p)) & 0x7fffffu);
  }
  return bits_float(u);
}

ZT_HOST_DEVICE uint16_t f32_to_f16_bits(float f) {
  const uint32_t u = float_bits(f);
  const uint32_t sign = (u >> 16) & 0x8000u, a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00u | ((a >> 13) & 0x3ffu));  // NaN
  if (a >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);                       // >= 65520: inf
  if (a >= 0x38800000u) {  // normal (>= 2^-14): rebias 127 -> 15, round the 13 dropped bits
    const uint32_t r = a - 0x38000000u;
    return static_cast<uint16_t>(sign | ((r + 0xfffu + ((r >> 13) & 1u)) >> 13));
  }
  if (a <= 0x33000000u) return static_cast<uint16_t>(sign);  // <= 2^-25 (the tie) rounds to 0
  // Subnormal: k = m * 2^(e - 150) / 2^-24 = m >> (126 - e), shift in [14, 24].
  const uint32_t m = (a & 0x7fffffu) | 0x800000u;
  const int shift = 126 - static_cast<int>(a >> 23);
  const uint32_t k = m >> shift, rem = m & ((1u << shift) - 1u), half = 1u << (shift - 1);
  return static_cast<uint16_t>(sign | (k + ((rem > half || (rem == half && (k & 1u))) ? 1u : 0u)));
}

}  // namespace zt
