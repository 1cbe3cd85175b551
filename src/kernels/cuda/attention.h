// Causal self-attention on the GPU, phase 1 of issue 28 (contract: ActivationOps'
// attention_forward / attention_backward): the algorithm of the CPU kernel
// (docs/design/attention.md) with the per-head products as strided-batched cuBLASLt GEMMs
// over (batch, head): q, k, v are permuted to (B, NH, T, hs); S = scale q k^T in fp32; a
// causal softmax writes P, in the activations' storage, into `att` (B, NH, T, T) for the
// backward; y = P v. The backward recomputes nothing: dV = P^T dO, dP = dO V^T (fp32),
// dS = scale P o (dP - rowsum(dP o P)), dQ = dS K, dK = dS^T Q.
// Precision against the CPU's 16-bit attention, which keeps P and dS in fp32 inside the
// kernel: here P·V and the dQ/dK products read P and dS rounded to the storage type once
// (cuBLASLt multiplies 16-bit operands), one more rounding of relative size 2^-9 (bf16)
// per operand; every sum is fp32. fp32 storage keeps everything fp32 (no TF32).
// T x T is materialized (B NH T^2 fp32 of workspace): the fp32 path, head sizes flash
// attention does not serve, and ZT_CUDA_ATTENTION=materialized (flash_attention.h otherwise).
// Thread-safety: as LtGemm.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "tensor/dtype.h"
#include "core/status.h"
#include "kernels/cuda/gemm_lt.h"

namespace zt::cuda {

// Bytes of device workspace the forward or backward needs.
size_t attention_workspace_bytes(DType t, int B, int T, int C, int NH);

// atty (B, T, C), att (B, NH, T, T), qkv (B, T, 3C), all in t.
Status attention_forward(LtGemm& lt, DType t, void* atty, void* att, const void* qkv, int B, int T, int C, int NH,
                         void* workspace, cudaStream_t stream);
// dqkv (B, T, 3C) assigned.
Status attention_backward(LtGemm& lt, DType t, void* dqkv, const void* datty, const void* qkv, const void* att, int B,
                          int T, int C, int NH, void* workspace, cudaStream_t stream);

}  // namespace zt::cuda
