// Argument types shared by every device's kernels and the backend's ops table
// (kernels/kernel_ops.h): GEMM transposes, the per-step scalars of the optimizer
// updates, and a tensor-parallel rank's vocabulary slice. Device-neutral plain values,
// and the few scalar computations every device must do alike (ZT_HOST_DEVICE: LAMB's
// trust ratio and step, a micro-batch's loss sum), written once for the CPU and CUDA.
#pragma once

#include <cmath>
#include <cstdint>

#include "core/host_device.h"

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
// tensor's update is two kernels: lamb_moments (m, v and the two sums of squares, added
// into backend memory), then lamb_apply, which reads those sums where they are and steps
// by -(step_size * trust ratio) (lamb_neg_step). u = m / denom + decay * p is recomputed
// by lamb_apply, never stored.
struct LambArgs {
  float grad_scale = 1.0f;        // multiplies the gradient first (clipping coefficient)
  float beta1 = 0.9f;
  float one_minus_beta1 = 0.1f;
  float beta2 = 0.999f;
  float one_minus_beta2 = 0.001f;
  float eps = 1e-8f;
  bool eps_inside_sqrt = false;   // denom = sqrt(v + eps), else sqrt(v) + eps
  float decay = 0.0f;             // weight decay of this tensor (0 for tensors without)
  double step_size = 0.0;         // lamb_apply only: lr (* bias corrections)
  double min_coeff = 0.0;         // lamb_apply only: the trust ratio's clamp
  double max_coeff = 0.0;
};

// What lamb_moments adds up, in double: sum p^2 (p before the update) and sum u^2.
struct LambSums {
  double param_sq = 0.0;
  double update_sq = 0.0;
};

// The trust ratio clamp(||p|| / ||u||, min_coeff, max_coeff), or 1 when either norm is 0.
// sqrt, division and the compares are correctly rounded IEEE operations, so every device
// gets the same bits (std::min(std::max(...)) order: a NaN ratio stays NaN).
ZT_HOST_DEVICE double lamb_trust_ratio(const LambSums& s, double min_coeff, double max_coeff) {
  const double w = sqrt(s.param_sq), u = sqrt(s.update_sq);
  if (w == 0.0 || u == 0.0) return 1.0;
  double c = w / u;
  c = c < min_coeff ? min_coeff : c;
  return max_coeff < c ? max_coeff : c;
}

// KernelOps::loss_sum's arithmetic, one pass in index order (the CPU kernel, and the CUDA
// kernel on one thread, so both give the same bits): out[0] = the sum in double of losses
// over targets that are not kIgnoreIndex, out[1] = their count.
ZT_HOST_DEVICE void masked_loss_sum(double* out, const float* losses, const int32_t* targets, int64_t n) {
  double sum = 0.0;
  int64_t count = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (targets[i] == kIgnoreIndex) continue;
    sum += losses[i];
    ++count;
  }
  out[0] = sum;
  out[1] = static_cast<double>(count);
}

// lamb_apply's step: -(step_size * trust ratio), rounded to float once.
ZT_HOST_DEVICE float lamb_neg_step(const LambSums& s, const LambArgs& a) {
  return static_cast<float>(-(a.step_size * lamb_trust_ratio(s, a.min_coeff, a.max_coeff)));
}

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
