// AdamWArgs: the per-step scalars of one AdamW update, precomputed in double on the
// host and rounded to float once (as torch does with its Python-float scalars).
#pragma once

namespace zt {

struct AdamWArgs {
  float grad_scale = 1.0f;            // multiplies the gradient first (clipping coefficient)
  float decay_factor = 1.0f;          // 1 - lr * weight_decay (1 for tensors without decay)
  float beta1 = 0.9f;
  float one_minus_beta1 = 0.1f;
  float beta2 = 0.999f;
  float one_minus_beta2 = 0.001f;
  float bias_correction2_sqrt = 1.0f; // sqrt(1 - beta2^t)
  float eps = 1e-8f;
  float neg_step_size = 0.0f;         // -lr / (1 - beta1^t)
};

}  // namespace zt
