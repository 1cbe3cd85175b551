// How an MoE layer's routed output meets a dense MLP beside it (issue 30), forward and
// backward, per token (N rows of C), in fp32 on the host:
//   kResidual (DeepSpeed's use_residual, PR-MoE): c = softmax(logits) over 2 per token,
//             y = c0 moe + c1 dense (logits = x Wc^T + bc, the caller's linear);
//   kGatedShared (Qwen2-MoE's shared expert): y = moe + sigmoid(logit) dense (logit =
//             x w^T, one per token);
//   kShared (DeepSeek-MoE's shared experts): y = moe + dense.
// Backward: the gradients of moe, dense and the logits (assigned), dots in double.
// Thread-safety: pure functions; they parallelise over tokens.
#pragma once

#include <cstdint>

#include "kernels/moe_ops.h"

namespace zt {

void moe_mix_forward(float* y, const float* moe, const float* dense, const float* logits, int64_t N, int C, MoeMix kind);
// dlogits may be null for kShared.
void moe_mix_backward(float* dmoe, float* ddense, float* dlogits, const float* dy, const float* moe, const float* dense,
                      const float* logits, int64_t N, int C, MoeMix kind);

}  // namespace zt
