// Softmax cross-entropy over rows of logits on the GPU (contract: ActivationOps'
// crossentropy_forward / crossentropy_backward): a row has Vp entries of which the first V
// are real classes; target -1 is ignored (loss 0, stats 0, gradient 0). The forward saves
// per row [max, log-sum-exp] in fp32; the backward recomputes the probabilities from them
// and may write over the logits. Both reproduce the CPU kernel of the order's ISA bit for
// bit (cpu_order.h: W lanes per row, the CPU's exp, its padding lanes included), given the
// same logits; tokens and targets are device memory.
// Thread-safety: as elementwise.h.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "tensor/dtype.h"
#include "kernels/cuda/cpu_order.h"

namespace zt::cuda {

// losses (N), stats (N, 2) fp32; logits (N, Vp) in t.
void crossentropy_forward(DType t, CpuOrder o, float* losses, float* stats, const void* logits,
                          const int32_t* targets, int64_t N, int V, int Vp, cudaStream_t stream);
// dlogits (N, Vp) in t, may alias logits.
void crossentropy_backward(DType t, CpuOrder o, void* dlogits, const void* logits, const float* stats,
                           const int32_t* targets, float dloss, int64_t N, int V, int Vp, cudaStream_t stream);

// out[0] = the sum of losses over targets != -1 (in double, in index order, as the CPU),
// out[1] = their count; out: two doubles of device memory.
void loss_sum(double* out, const float* losses, const int32_t* targets, int64_t n, cudaStream_t stream);

}  // namespace zt::cuda
