// LAMB (You et al., "Large Batch Optimization for Deep Learning") as DeepSpeed's FusedLamb
// computes it (csrc/lamb/fused_lamb_cuda_kernel.cu), per parameter tensor, step t from 1:
//   g = grad * grad_scale
//   m = b1 m + (1 - b1) g,  v = b2 v + (1 - b2) g^2
//   u = m / denom + decay * p,  denom = eps_inside_sqrt ? sqrt(v + eps) : sqrt(v) + eps
//   coeff = clamp(||p|| / ||u||, min_coeff, max_coeff), or 1 when either norm is 0
//   p -= step_size * coeff * u,  step_size = bias_correction ? lr sqrt(1 - b2^t) / (1 - b1^t) : lr
// decay is weight_decay on tensors whose TensorSpec says so (2-D weights), else 0.
//
// Invariant: the trust ratio needs whole-tensor norms, so the range and every update()
// call hold whole tensors. create() refuses a range that cuts a tensor; update() aborts
// (ZT_CHECK) on a call that cuts one. The engine gives LAMB whole tensors by refusing it
// with ZeRO >= 1 (shards), tensor parallelism (split tensors), optimizer offload (swapped
// chunks) and the parameter server (reply slices): with none of them the range is the
// whole arena and the resident state store calls update() once per step.
// The update is the backend's lamb_moments + lamb_apply kernels (SIMD on the CPU, the
// same bits on every ISA); the sums of squares are in double, in backend memory, and the
// trust ratio is formed from them by lamb_apply, so a step reads nothing back.
// Thread-safety: one thread calls begin_step/update; the kernels parallelise internally.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "optim/lamb_options.h"
#include "optim/optimizer.h"

namespace zt {

class Lamb final : public Optimizer {
 public:
  // InvalidArgument when the range cuts a tensor; the moments' allocation failure is a
  // Status. own_state = false: the moments live elsewhere (update() is given them).
  static StatusOr<std::unique_ptr<Lamb>> create(const ParamTable& table, ElementRange range,
                                                const LambOptions& options, const Backend& backend = cpu_backend(),
                                                bool own_state = true);

  void begin_step(const StepHyper& hyper) override;
  void update(size_t offset, size_t n, float* params, const float* grads, float* const* states) override;
  std::vector<std::string> state_names() const override { return {"exp_avg", "exp_avg_sq"}; }
  ElementRange range() const override { return range_; }
  size_t state_bytes() const override { return exp_avg_.bytes() + exp_avg_sq_.bytes(); }
  std::vector<StateTensor> state() override;
  int64_t step_count() const override { return steps_; }
  void set_step_count(int64_t steps) override { steps_ = steps; }
  const char* name() const override { return "LAMB"; }
  const LambOptions& options() const { return options_; }
  // The trust ratio (coeff) each tensor of the range got in the last update, in table
  // order: one copy of the per-tensor sums from backend memory.
  std::vector<double> trust_ratios() const;

 private:
  struct TensorPart {  // one whole tensor of the range, relative to range.begin
    std::string name;
    size_t begin;
    size_t end;
    bool decay;
  };
  Lamb(std::vector<TensorPart> tensors, ElementRange range, const LambOptions& options, const Backend& backend,
       Arena m, Arena v, Arena sums);
  LambOptions options_;
  const Backend& backend_;
  const KernelOps& k_;
  ElementRange range_;
  std::vector<TensorPart> tensors_;
  Arena exp_avg_;     // first moment m, one float per element of range_
  Arena exp_avg_sq_;  // second moment v
  int64_t steps_ = 0;
  LambArgs args_;  // of the current step (begin_step); decay per tensor
  Arena sums_;     // backend memory: one LambSums per tensor, zeroed by begin_step
};

}  // namespace zt
