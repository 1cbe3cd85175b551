// SGD with momentum, as torch.optim.SGD: g += wd * p (L2, on decayed tensors only);
// buf = momentum * buf + (1 - dampening) * g (buf = g on the first step);
// g = nesterov ? g + momentum * buf : buf; p -= lr * g.
#pragma once

#include "optim/optimizer.h"
#include <memory>

#include "backend/backend.h"

namespace zt {

struct SgdOptions {
  double lr = 1e-3;
  double momentum = 0.0;
  double dampening = 0.0;
  double weight_decay = 0.0;
  bool nesterov = false;
};

class Sgd final : public Optimizer {
 public:
  // The momentum buffer's allocation failure is a Status. own_state = false: the buffer
  // lives elsewhere (update() is given it).
  static StatusOr<std::unique_ptr<Sgd>> create(const ParamTable& table, ElementRange range, const SgdOptions& options,
                                               const Backend& backend = cpu_backend(), bool own_state = true);

  void begin_step(const StepHyper& hyper) override;
  void update(size_t offset, size_t n, float* params, const float* grads, float* const* states) override;
  std::vector<std::string> state_names() const override;
  ElementRange range() const override { return range_; }
  size_t state_bytes() const override { return momentum_buffer_.bytes(); }
  std::vector<StateTensor> state() override;
  int64_t step_count() const override { return steps_; }
  void set_step_count(int64_t steps) override { steps_ = steps; }
  const char* name() const override { return "SGD"; }

 private:
  Sgd(const ParamTable& table, ElementRange range, const SgdOptions& options, const Backend& backend, Arena buffer);
  SgdOptions options_;
  const KernelOps& k_;
  ElementRange range_;
  std::vector<DecaySegment> segments_;
  Arena momentum_buffer_;  // empty when momentum == 0 or the state lives elsewhere
  int64_t steps_ = 0;
  SgdArgs args_;  // of the current step (begin_step)
};

}  // namespace zt
