// Conversions between fp32 and the two 16-bit storage formats of the mixed-precision
// kernel tables: bf16 (the high half of an IEEE float) and f16 (IEEE binary16).
//
// Invariants: those of core/half_bits.h, which defines the conversion of one value for
// the CPU and CUDA alike (widening exact; nearest even; NaN kept quiet; f16 overflow to
// inf; f16 subnormals rounded correctly). The bulk f16 loops use F16C where the CPU has it and ZT_ISA is not scalar;
// both paths give identical bits (half_convert_test.cc checks every f16 pattern).
// Thread-safety: pure functions; the bulk loops parallelise internally (OpenMP).
#pragma once

#include <cstdint>
#include <cstring>

#include "tensor/dtype.h"
#include "kernels/cpu/elementwise.h"
#include "core/half_bits.h"  // f16_bits_to_f32, f32_to_f16_bits: one value each

namespace zt {

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
