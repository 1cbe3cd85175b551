// Flash attention on the GPU for 16-bit storage (issue 28, phase 2; contract: ActivationOps'
// attention_forward / attention_backward, the same causal attention as attention.h). T x T is
// never materialized: 64 x 64 tiles of scores live in registers of tensor-core products
// (mma.sync m16n8k16, 16-bit operands, fp32 accumulators), the forward keeps FlashAttention-2's
// running max and sum per row, and the backward recomputes P from the saved row log-sum-exp.
//
// Determinism: no atomics. The backward runs two kernels: one per key block accumulates dK and
// dV over the query blocks in order (and stores each tile pair's dS where att has room: see
// flash_attention_stores_ds), one per query block accumulates dQ over the key blocks in order;
// every sum has one fixed order, so two runs give the same bits.
//
// Rounding (the bound of flash_attention_test.cc): the products read P (forward and dV) and dS
// (dQ, dK) rounded to the storage type once, as the materialized 16-bit path and PyTorch's SDPA
// do; D = rowsum(dO o O) reads the stored (rounded) O; everything else is fp32.
//
// Saved state: the forward writes into `att` (the activations' (B, NH, T, T) slot, which the
// flash path does not need whole) the row log-sum-exp in base 2, (B, NH, T) fp32, and a copy of
// its output O, (B, T, C), for the backward's D. flash_attention_serves says when that fits.
// The backward may write its dS tiles into the rest of att (its own slot, dead after it).
// Thread-safety: stateless; work is queued on the given stream.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

#include "core/status.h"
#include "tensor/dtype.h"

namespace zt::cuda {

// True when the flash kernels take (t, T, C, NH): 16-bit storage, head size 16, 32 or 64,
// C a multiple of 8, and the saved state fits in `att` (NH T >= 2 NH + C elements per row).
bool flash_attention_serves(DType t, int T, int C, int NH);

// True when the backward's dS tiles fit in att beside the saved state (at T = 1024 and head
// size 64 they take 53 % of it): the dK/dV kernel then stores dS, and the dQ kernel reads it
// instead of recomputing S, P and dP (2 of its 3 products). Else the dQ kernel recomputes.
bool flash_attention_stores_ds(int B, int T, int C, int NH);

// Device workspace bytes of the backward (D: B NH T floats).
size_t flash_attention_workspace_bytes(int B, int T, int NH);

// atty (B, T, C) assigned; att receives the saved state; qkv (B, T, 3C).
Status flash_attention_forward(DType t, void* atty, void* att, const void* qkv, int B, int T, int C, int NH,
                               cudaStream_t stream);
// dqkv (B, T, 3C) assigned. store_ds false makes the dQ kernel recompute dS even where
// flash_attention_stores_ds (the kernel benchmark times both ways).
Status flash_attention_backward(DType t, void* dqkv, const void* datty, const void* qkv, const void* att, int B,
                                int T, int C, int NH, void* workspace, cudaStream_t stream, bool store_ds = true);

}  // namespace zt::cuda
