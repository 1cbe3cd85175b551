// AdamW: per-step scalars in double (as torch's Python floats), kernel per segment.
#include "optim/adamw.h"

#include <cmath>


namespace zt {

AdamW::AdamW(const ParamTable& table, ElementRange range, const AdamWOptions& options, const Backend& backend, Arena m,
             Arena v)
    : options_(options),
      k_(backend.ops()),
      range_(range),
      segments_(decay_segments(table, range)),
      exp_avg_(std::move(m)),
      exp_avg_sq_(std::move(v)) {}

StatusOr<std::unique_ptr<AdamW>> AdamW::create(const ParamTable& table, ElementRange range,
                                               const AdamWOptions& options, const Backend& backend, bool own_state) {
  const size_t n = own_state ? range.size() : 0;
  ZT_ASSIGN_OR_RETURN(Arena m, backend.allocate(n, DType::kF32, "AdamW's first moments"));
  ZT_ASSIGN_OR_RETURN(Arena v, backend.allocate(n, DType::kF32, "AdamW's second moments"));
  return std::unique_ptr<AdamW>(new AdamW(table, range, options, backend, std::move(m), std::move(v)));
}

void AdamW::begin_step(const StepHyper& hyper) {
  ++steps_;
  const double beta1 = std::isnan(hyper.momentum) ? options_.beta1 : hyper.momentum;
  const double beta2 = options_.beta2;
  const double t = static_cast<double>(steps_);
  const double bc1 = options_.bias_correction ? 1.0 - std::pow(beta1, t) : 1.0;
  const double bc2 = options_.bias_correction ? 1.0 - std::pow(beta2, t) : 1.0;
  AdamWArgs& args = args_;
  args.grad_scale = static_cast<float>(hyper.grad_scale);
  args.beta1 = static_cast<float>(beta1);
  args.one_minus_beta1 = static_cast<float>(1.0 - beta1);
  args.beta2 = static_cast<float>(beta2);
  args.one_minus_beta2 = static_cast<float>(1.0 - beta2);
  args.bias_correction2_sqrt = static_cast<float>(std::sqrt(bc2));
  args.eps = static_cast<float>(options_.eps);
  args.neg_step_size = static_cast<float>(-(hyper.lr / bc1));
  decay_factor_ = static_cast<float>(1.0 - hyper.lr * options_.weight_decay);
}

AdamWArgs AdamW::segment_args(bool decay) const {
  AdamWArgs args = args_;
  args.decay_factor = decay ? decay_factor_ : 1.0f;
  return args;
}

void AdamW::update(size_t offset, size_t n, float* params, const float* grads, float* const* states) {
  for_each_segment(segments_, offset, n, [&](size_t lo, size_t hi, bool decay) {
    k_.adamw_step(params + lo, grads + lo, states[0] + lo, states[1] + lo, static_cast<int64_t>(hi - lo),
                  segment_args(decay));
  });
}

void AdamW::update_copy(size_t offset, size_t n, float* params, const float* grads, float* const* states,
                        half_t* copy, const ActivationOps<half_t>& half) {
  for_each_segment(segments_, offset, n, [&](size_t lo, size_t hi, bool decay) {
    half.adamw_step_copy(copy + lo, params + lo, grads + lo, states[0] + lo, states[1] + lo,
                         static_cast<int64_t>(hi - lo), segment_args(decay));
  });
}

std::vector<StateTensor> AdamW::state() {
  if (exp_avg_.empty()) return {};
  return {{"exp_avg", exp_avg_.data(), exp_avg_.size()}, {"exp_avg_sq", exp_avg_sq_.data(), exp_avg_sq_.size()}};
}

}  // namespace zt
