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
                                               const AdamWOptions& options, const Backend& backend) {
  ZT_ASSIGN_OR_RETURN(Arena m, backend.allocate(range.size(), DType::kF32, "AdamW's first moments"));
  ZT_ASSIGN_OR_RETURN(Arena v, backend.allocate(range.size(), DType::kF32, "AdamW's second moments"));
  return std::unique_ptr<AdamW>(new AdamW(table, range, options, backend, std::move(m), std::move(v)));
}

void AdamW::step(float* params, const float* grads, const StepHyper& hyper) {
  ++steps_;
  const double beta1 = std::isnan(hyper.momentum) ? options_.beta1 : hyper.momentum;
  const double beta2 = options_.beta2;
  const double t = static_cast<double>(steps_);
  const double bc1 = options_.bias_correction ? 1.0 - std::pow(beta1, t) : 1.0;
  const double bc2 = options_.bias_correction ? 1.0 - std::pow(beta2, t) : 1.0;
  AdamWArgs args;
  args.grad_scale = static_cast<float>(hyper.grad_scale);
  args.beta1 = static_cast<float>(beta1);
  args.one_minus_beta1 = static_cast<float>(1.0 - beta1);
  args.beta2 = static_cast<float>(beta2);
  args.one_minus_beta2 = static_cast<float>(1.0 - beta2);
  args.bias_correction2_sqrt = static_cast<float>(std::sqrt(bc2));
  args.eps = static_cast<float>(options_.eps);
  args.neg_step_size = static_cast<float>(-(hyper.lr / bc1));
  const float decay_factor = static_cast<float>(1.0 - hyper.lr * options_.weight_decay);
  for (const DecaySegment& seg : segments_) {
    args.decay_factor = seg.decay ? decay_factor : 1.0f;
    const int64_t n = static_cast<int64_t>(seg.end - seg.begin);
    k_.adamw_step(params + seg.begin, grads + seg.begin, exp_avg_.data() + seg.begin,
                 exp_avg_sq_.data() + seg.begin, n, args);
  }
}

std::vector<StateTensor> AdamW::state() {
  return {{"exp_avg", exp_avg_.data(), exp_avg_.size()}, {"exp_avg_sq", exp_avg_sq_.data(), exp_avg_sq_.size()}};
}

}  // namespace zt
