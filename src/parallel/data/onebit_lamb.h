// 1-bit LAMB (DeepSpeed's runtime/fp16/onebit/lamb.py). As DeepSpeed computes it (no
// bias correction; update u = m / (sqrt(v) + eps) + decay * p, decay on the tensors whose
// TensorSpec says so):
//   warm-up (steps 1..freeze_step): LAMB on the all-reduced gradient, the trust ratio
//     c = clamp(||p|| / ||u||, min_coeff, max_coeff) per tensor, and an EMA of each
//     tensor's c (coeff_beta) kept as its frozen ratio; at freeze_step v is copied to
//     v_fresh.
//   after: each rank updates m with its own gradient; m, each tensor scaled by
//     scaling_coeff (the mean of the tensors' rms(m) over its own, fixed at the first
//     compressed step) to even out magnitudes, is compress-all-reduced as one vector
//     (onebit_compressor.h) and unscaled. The gradient is rebuilt from m's change,
//     g = (m - beta1 m_prev) / (1 - beta1), and feeds v_fresh; v stays frozen. The ratio
//     is the frozen one times a factor max(denom / denom_fresh) (mixed with 1 by the
//     decay's share of ||u||), clamped to [factor_min, factor_max] and to within
//     factor_threshold of the previous step's factor.
// Differences from DeepSpeed, on purpose: the first step is an ordinary step (DeepSpeed's
// only allocates); the error buffers and the per-tensor ratios, factors and scaling are
// checkpointed as rank state (a resume in the same layout continues bit for bit).
// Invariant and thread-safety as onebit_adam.h.
#pragma once

#include <vector>

#include "optim/lamb_options.h"
#include "optim/optimizer.h"
#include "parallel/data/onebit_compressor.h"
#include "tensor/tensor_spec.h"

namespace zt {

class OneBitLamb final : public Optimizer {
 public:
  OneBitLamb(const ParamTable& table, ElementRange range, const OneBitOptions& options, ProcessGroup* dp);

  void begin_step(const StepHyper& hyper) override;
  void update(size_t offset, size_t n, float* params, const float* grads, float* const* states) override;
  std::vector<std::string> state_names() const override { return {"exp_avg", "exp_avg_sq", "exp_avg_sq_fresh"}; }
  ElementRange range() const override { return range_; }
  size_t state_bytes() const override { return compressor_.error_bytes() + last_m_.size() * sizeof(float); }
  std::vector<StateTensor> state() override { return {}; }
  int64_t step_count() const override { return steps_; }
  void set_step_count(int64_t steps) override { steps_ = steps; }
  const char* name() const override { return "OneBitLamb"; }
  bool engine_reduces_gradients() const override { return steps_ + 1 <= o_.freeze_step; }
  Status last_error() const override { return error_; }
  std::vector<RankArray> rank_state() override;
  void rank_state_loaded() override;

 private:
  struct Tensor {
    size_t begin, n;  // relative to the range
    bool decay;
    double coeff_freeze = 0.0;  // EMA of the warm-up trust ratios
    double last_factor = 1.0;
    double scaling = 1.0;       // scaling_coeff
  };
  void warmup_step(float* p, const float* g, float* m, float* v, float* v_fresh);
  void compressed_step(float* p, const float* g, float* m, float* v, float* v_fresh);
  double frozen_ratio(Tensor& t, const float* p, const float* m, const float* v, const float* v_fresh) const;

  OneBitOptions o_;
  ElementRange range_;
  std::vector<Tensor> tensors_;
  OneBitCompressor compressor_;  // one segment: the whole range
  std::vector<float> last_m_;
  bool scaled_ = false;  // scaling_coeff computed
  std::vector<double> packed_;  // rank_state()'s copy: scaled_, then each tensor's three values
  int64_t steps_ = 0;
  double lr_ = 0.0, grad_scale_ = 1.0, beta1_ = 0.9;
  Status error_;
};

}  // namespace zt
