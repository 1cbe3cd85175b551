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
  // The moments' allocation failure is a Status.
  static StatusOr<std::unique_ptr<AdamW>> create(const ParamTable& table, ElementRange range,
                                                 const AdamWOptions& options, const Backend& backend = cpu_backend());

  void step(float* params, const float* grads, const StepHyper& hyper) override;
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
  AdamWOptions options_;
  const KernelOps& k_;
  ElementRange range_;
  std::vector<DecaySegment> segments_;
  Arena exp_avg_;     // first moment m, one float per element of range_
  Arena exp_avg_sq_;  // second moment v
  int64_t steps_ = 0;
};

}  // namespace zt
