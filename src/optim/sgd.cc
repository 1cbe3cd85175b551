// SGD: per-step scalars on the host, the backend's sgd_step kernel per decay segment.
#include "optim/sgd.h"

#include <cmath>
#include <cstdint>

namespace zt {

Sgd::Sgd(const ParamTable& table, ElementRange range, const SgdOptions& options, const Backend& backend, Arena buffer)
    : options_(options),
      k_(backend.ops()),
      range_(range),
      segments_(decay_segments(table, range)),
      momentum_buffer_(std::move(buffer)) {}

StatusOr<std::unique_ptr<Sgd>> Sgd::create(const ParamTable& table, ElementRange range, const SgdOptions& options,
                                           const Backend& backend, bool own_state) {
  const size_t n = options.momentum != 0.0 && own_state ? range.size() : 0;
  ZT_ASSIGN_OR_RETURN(Arena buf, backend.allocate(n, DType::kF32, "SGD's momentum buffer"));
  return std::unique_ptr<Sgd>(new Sgd(table, range, options, backend, std::move(buf)));
}

std::vector<std::string> Sgd::state_names() const {
  if (options_.momentum == 0.0) return {};
  return {"momentum_buffer"};
}

void Sgd::begin_step(const StepHyper& hyper) {
  SgdArgs& args = args_;
  args.first = steps_ == 0;
  ++steps_;
  args.lr = static_cast<float>(hyper.lr);
  // DeepSpeed's OneCycle cycles momentum only for optimizers with betas, never SGD's
  // momentum, so hyper.momentum is ignored here.
  args.momentum = static_cast<float>(options_.momentum);
  args.dampening_factor = static_cast<float>(1.0 - options_.dampening);
  args.grad_scale = static_cast<float>(hyper.grad_scale);
  args.use_momentum = options_.momentum != 0.0;
  args.nesterov = options_.nesterov;
}

void Sgd::update(size_t offset, size_t n, float* params, const float* grads, float* const* states) {
  float* buf = args_.use_momentum ? states[0] : nullptr;
  for_each_segment(segments_, offset, n, [&](size_t lo, size_t hi, bool decay) {
    SgdArgs args = args_;
    args.weight_decay = decay ? static_cast<float>(options_.weight_decay) : 0.0f;
    k_.sgd_step(params + lo, grads + lo, buf == nullptr ? nullptr : buf + lo, static_cast<int64_t>(hi - lo), args);
  });
}

std::vector<StateTensor> Sgd::state() {
  if (momentum_buffer_.empty()) return {};
  return {{"momentum_buffer", momentum_buffer_.data(), momentum_buffer_.size()}};
}

}  // namespace zt
