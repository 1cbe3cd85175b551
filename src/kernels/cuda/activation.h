// zerotrain's pointwise activation CUDA kernels, GELU (tanh form) and SwiGLU, forward
// and backward, for fp32 storage and the 16-bit storages: each element is widened,
// computed in fp32 exactly as the CPU's AVX2/AVX-512 kernels compute it (vmath.cuh:
// same operations, same order, fused where the CPU fuses) and rounded once. So the
// results are bit for bit the CPU's on those ISAs; the scalar ISA (ZT_ISA=scalar) does
// not fuse its fmadd and differs in the last bits.
// Pointers are device memory holding `t` elements (float for kF32, 16-bit patterns for
// kBF16/kF16); n elements; one launch on `stream`.
// Thread-safety: as elementwise.h.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "tensor/dtype.h"

namespace zt::cuda {

// out = x * sigmoid(2u), u = sqrt(2/pi) (x + 0.044715 x^3) (kernels/cpu/impl/gelu_impl.h).
void gelu_forward(DType t, void* out, const void* inp, int64_t n, cudaStream_t stream);
// dinp = gelu'(inp) * dout; dinp may alias dout.
void gelu_backward(DType t, void* dinp, const void* inp, const void* dout, int64_t n, cudaStream_t stream);
// out = silu(gate) * up (kernels/cpu/impl/swiglu_impl.h).
void swiglu_forward(DType t, void* out, const void* gate, const void* up, int64_t n, cudaStream_t stream);
// dgate, dup assigned; each may alias dout, gate or up element for element, not each other.
void swiglu_backward(DType t, void* dgate, void* dup, const void* dout, const void* gate, const void* up, int64_t n,
                     cudaStream_t stream);

}  // namespace zt::cuda
