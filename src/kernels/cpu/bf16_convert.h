// The bulk bf16 casts (the f32 table's cast_f32_to_bf16 / cast_bf16_to_f32, and every bf16
// kernel's widening and narrowing through half_rows): the active ISA's kernel table's
// widen_bf16 / narrow_bf16 (simd/elements.h's convert over the ISA struct's load_bf16 /
// store_bf16, AVX-512 or AVX2 integer code, the one vector definition the bf16 kernels use
// too), the scalar ISA's while ZT_ISA is invalid. Every path gives core/half_bits.h's bits:
// widening is a 16-bit shift; narrowing adds 0x7fff plus the kept bit's lowest bit (round
// to nearest even, overflow to inf) and keeps NaN quiet with its sign. Large casts are split
// over the OpenMP threads, unless the caller is one of them already (then the cast is that
// thread's).
// Thread-safety: pure functions.
#pragma once

#include <cstdint>

#include "tensor/dtype.h"

namespace zt {

// Round to nearest even (NaN stays a quiet NaN); the inverse is exact.
void cast_f32_to_bf16(bf16_t* dst, const float* src, int64_t n);
void cast_bf16_to_f32(float* dst, const bf16_t* src, int64_t n);

}  // namespace zt
