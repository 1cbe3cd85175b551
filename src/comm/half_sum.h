// The sum rule of the 16-bit collectives (CommDType kBF16 and kF16, process_group.h): the
// data are 16-bit bit patterns, and every addition a collective performs is formed in fp32
// from its two 16-bit operands and rounded to the format (nearest, ties to even:
// core/half_bits.h). This is what a 16-bit NCCL or MPI reduction does per hop; DeepSpeed's
// communication_data_type selects it.
// Error: a sum of n terms along any order is within (n - 1) u sum |x_i| of the exact sum of
// the (already 16-bit) terms, u the format's unit roundoff, 2^-8 for bf16 (8 significant
// bits) and 2^-11 for f16 (each addition's rounding is at most u of its result, and every
// partial sum is at most sum |x_i|; the fp32 step before it is exact or below that rounding).
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>

#include "comm/process_group.h"
#include "core/half_bits.h"

namespace zt {

inline bool is_half(CommDType d) { return d == CommDType::kBF16 || d == CommDType::kF16; }

inline float half_to_float(CommDType d, uint16_t h) {
  return d == CommDType::kBF16 ? bf16_bits_to_f32(h) : f16_bits_to_f32(h);
}
inline uint16_t float_to_half(CommDType d, float f) {
  return d == CommDType::kBF16 ? f32_to_bf16_bits(f) : f32_to_f16_bits(f);
}

// dst[i] = dst[i] (+) src[i] for i < n, (+) the rule above; the format is chosen once, not
// per element (this is the ring's per-hop add).
inline void half_sum_into(CommDType d, uint16_t* dst, const uint16_t* src, size_t n) {
  if (d == CommDType::kBF16) {
    for (size_t i = 0; i < n; ++i) dst[i] = f32_to_bf16_bits(bf16_bits_to_f32(dst[i]) + bf16_bits_to_f32(src[i]));
  } else {
    for (size_t i = 0; i < n; ++i) dst[i] = f32_to_f16_bits(f16_bits_to_f32(dst[i]) + f16_bits_to_f32(src[i]));
  }
}

}  // namespace zt
