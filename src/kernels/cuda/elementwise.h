// zerotrain's elementwise CUDA kernels: accumulation and the casts between fp32 and the
// 16-bit storage formats, bit for bit the CPU kernels' results (half_bits.cuh). One
// difference by nature: arithmetic on a NaN gives the GPU's canonical NaN where x86 keeps
// an operand's payload (accumulate); the casts are integer code and keep payloads too.
// Pointers are device memory; each call is one launch on `stream`, ordered with the
// stream's other work. Shapes: n elements.
// Thread-safety: launches on different streams are independent; the kernels do not
// synchronise.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "tensor/dtype.h"

namespace zt::cuda {

// dst += src.
void accumulate(float* dst, const float* src, int64_t n, cudaStream_t stream);
// x *= c (round to nearest, as the CPU's).
void scale(float* x, float c, int64_t n, cudaStream_t stream);
// dst = src rounded to `to` (kBF16 or kF16): nearest even, NaN quiet, f16 overflow to inf.
void cast_from_f32(DType to, half_t* dst, const float* src, int64_t n, cudaStream_t stream);
// dst = src (kBF16 or kF16) widened, exactly.
void cast_to_f32(DType from, float* dst, const half_t* src, int64_t n, cudaStream_t stream);

// out (N, C) = (residual + partial) + bias per row, rounded once to t (a row-parallel
// layer's epilogue, kernels/cpu/elementwise.h); out, residual, bias in t, partial fp32;
// bias may be null.
void bias_residual(DType t, void* out, const void* residual, const float* partial, const void* bias, int64_t N, int C,
                   cudaStream_t stream);

}  // namespace zt::cuda
