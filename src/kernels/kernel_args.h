// Argument types shared by every device's kernels and the backend's ops table
// (kernels/kernel_ops.h): GEMM transposes, the per-step scalars of the optimizer
// updates, and a tensor-parallel rank's vocabulary slice. Device-neutral plain values.
#pragma once

#include <cstdint>

namespace zt {

enum class Trans { kNo, kYes };

// The target of a position that takes no part in the loss.
constexpr int32_t kIgnoreIndex = -1;

// The per-step scalars of one AdamW update, precomputed in double on the host and rounded
// to float once (as torch does with its Python-float scalars).
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

// The per-step scalars of one LAMB update (DeepSpeed's FusedLamb), computed in double on
// the host and rounded to float once. The trust ratio needs whole-tensor norms, so one
// tensor's update is two kernels: lamb_moments (m, v and the two sums of squares), then
// lamb_apply with neg_step = -(step_size * trust ratio). u = m / denom + decay * p is
// recomputed by lamb_apply, never stored.
struct LambArgs {
  float grad_scale = 1.0f;        // multiplies the gradient first (clipping coefficient)
  float beta1 = 0.9f;
  float one_minus_beta1 = 0.1f;
  float beta2 = 0.999f;
  float one_minus_beta2 = 0.001f;
  float eps = 1e-8f;
  bool eps_inside_sqrt = false;   // denom = sqrt(v + eps), else sqrt(v) + eps
  float decay = 0.0f;             // weight decay of this tensor (0 for tensors without)
  float neg_step = 0.0f;          // lamb_apply only: -(step_size * trust ratio)
};

// What lamb_moments adds up, in double: sum p^2 (p before the update) and sum u^2.
struct LambSums {
  double param_sq = 0.0;
  double update_sq = 0.0;
};

// One SGD update as torch.optim.SGD: g = g * grad_scale + weight_decay * p;
// buf = first ? g : momentum * buf + dampening_factor * g; g = nesterov ? g + momentum * buf : buf;
// p = p - lr * g. buf is unused (may be null) when use_momentum is false.
struct SgdArgs {
  float lr = 0.0f;
  float grad_scale = 1.0f;
  float weight_decay = 0.0f;
  float momentum = 0.0f;
  float dampening_factor = 1.0f;  // 1 - dampening
  bool use_momentum = false;
  bool first = false;             // the first step: buf = g
  bool nesterov = false;
};

// A tensor-parallel rank's rows [vstart, vstart + Vl) of a vocabulary of V real classes
// (rows >= V are padding and never take part).
struct VocabSlice {
  int vstart = 0;
  int Vl = 0;
  int V = 0;
};

}  // namespace zt
