// LayerNorm and RMSNorm on the GPU, forward and backward, for fp32 and the 16-bit
// storages (contracts: kernels/activation_ops.h). The per-row work reproduces the CPU
// kernels of the order's ISA bit for bit (cpu_order.h, lane_order.cuh: W lanes per row,
// the same operations, fused where the CPU fuses): outputs, mean/rstd and the input
// gradient. The weight and bias gradients sum over rows in column_reduce.cuh's fixed
// order instead of the CPU's plain row order: deterministic, not bit-equal.
// Pointers are device memory holding `t` elements (mean, rstd and the parameter gradients
// are fp32); one or two launches on `stream`.
// Thread-safety: as elementwise.h.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "tensor/dtype.h"
#include "kernels/cuda/cpu_order.h"

namespace zt::cuda {

// Floats of workspace a backward over (N, C) needs.
int64_t norm_workspace_floats(int64_t N, int C);

// out (N, C) = (inp - mean) * rstd * weight + bias; mean, rstd (N) saved (eps 1e-5).
void layernorm_forward(DType t, CpuOrder o, void* out, float* mean, float* rstd, const void* inp, const void* weight,
                       const void* bias, int64_t N, int C, cudaStream_t stream);
// dinp += the input gradient; dweight, dbias += (fp32).
void layernorm_backward(DType t, CpuOrder o, void* dinp, float* dweight, float* dbias, const void* dout,
                        const void* inp, const void* weight, const float* mean, const float* rstd, int64_t N, int C,
                        float* workspace, cudaStream_t stream);
// out (N, C) = inp * rstd * weight, rstd (N) = 1 / sqrt(mean(inp^2) + eps).
void rmsnorm_forward(DType t, CpuOrder o, void* out, float* rstd, const void* inp, const void* weight, int64_t N,
                     int C, float eps, cudaStream_t stream);
// dinp += the input gradient; dweight += (fp32).
void rmsnorm_backward(DType t, CpuOrder o, void* dinp, float* dweight, const void* dout, const void* inp,
                      const void* weight, const float* rstd, int64_t N, int C, float* workspace, cudaStream_t stream);

}  // namespace zt::cuda
