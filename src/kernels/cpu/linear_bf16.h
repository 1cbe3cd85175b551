// The fully connected layer for bf16 compute (issue 13's bf16 kernel table): weights and
// activations in bf16, every sum in fp32, each bf16 output rounded once; parameter
// gradients accumulate in fp32 (DeepSpeed's default grad_accum_dtype). Layout as
// linear.h: weight (OC, C), out = inp @ weight^T.
#pragma once

#include <cstdint>

#include "tensor/dtype.h"

namespace zt {

// out (N, OC) = round_bf16(residual (may be null; may alias out) + bias (OC, may be null)
// + inp (N, C) @ weight^T), the sum formed in fp32. The signature is ActivationOps<half_t>'s
// linear_forward (half_ops.h puts this function in the bf16 table).
void linear_forward_bf16(bf16_t* out, const bf16_t* inp, const bf16_t* weight, const bf16_t* bias,
                         const bf16_t* residual, int64_t N, int C, int OC);

// dinp (N, C) = round_bf16(dout @ weight) (skipped when null); dweight (OC, C) += dout^T @ inp
// and dbias (OC) += column sums of dout (may be null), both in fp32, the bias sums in
// fixed row order (independent of the thread count).
void linear_backward_bf16(bf16_t* dinp, float* dweight, float* dbias, const bf16_t* dout, const bf16_t* inp,
                          const bf16_t* weight, int64_t N, int C, int OC);

}  // namespace zt
