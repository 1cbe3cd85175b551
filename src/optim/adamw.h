// AdamW (decoupled weight decay, Loshchilov & Hutter) as torch.optim.AdamW computes it,
// with weight decay only on tensors whose TensorSpec says so (2-D weights). The update
// itself is the backend's adamw_step kernel (the CPU's is SIMD, chosen at run time); the
// moments are arenas of the same backend.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "optim/optimizer.h"
#include "backend/backend.h"

namespace zt {

struct AdamWOptions {
  double lr = 1e-3;  // used when no schedule is configured
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 0.01;
  bool bias_correction = true;
};

class AdamW final : public Optimizer {
 public:
  // The moments' allocation failure is a Status. own_state = false: the moments live
  // elsewhere (update() is given them).
  static StatusOr<std::unique_ptr<AdamW>> create(const ParamTable& table, ElementRange range,
                                                 const AdamWOptions& options, const Backend& backend = cpu_backend(),
                                                 bool own_state = true);

  void begin_step(const StepHyper& hyper) override;
  void update(size_t offset, size_t n, float* params, const float* grads, float* const* states) override;
  // The update and the compute copy in one pass (half.adamw_step_copy per segment).
  void update_copy(size_t offset, size_t n, float* params, const float* grads, float* const* states, half_t* copy,
                   const ActivationOps<half_t>& half) override;
  std::vector<std::string> state_names() const override { return {"exp_avg", "exp_avg_sq"}; }
  ElementRange range() const override { return range_; }
  size_t state_bytes() const override { return exp_avg_.bytes() + exp_avg_sq_.bytes(); }
  std::vector<StateTensor> state() override;
  int64_t step_count() const override { return steps_; }
  void set_step_count(int64_t steps) override { steps_ = steps; }
  const char* name() const override { return "AdamW"; }
  const AdamWOptions& options() const { return options_; }

 private:
  AdamW(const ParamTable& table, ElementRange range, const AdamWOptions& options, const Backend& backend, Arena m,
        Arena v);
  AdamWArgs segment_args(bool decay) const;  // the step's arguments for a (non-)decayed segment
  AdamWOptions options_;
  const KernelOps& k_;
  ElementRange range_;
  std::vector<DecaySegment> segments_;
  Arena exp_avg_;     // first moment m, one float per element of range_
  Arena exp_avg_sq_;  // second moment v
  int64_t steps_ = 0;
  AdamWArgs args_;             // of the current step (begin_step)
  float decay_factor_ = 1.0f;  // 1 - lr * weight_decay of the current step
};

}  // namespace zt
