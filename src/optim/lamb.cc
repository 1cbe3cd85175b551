// LAMB: per-step scalars in double (as AdamW), then per whole tensor the moments kernel,
// the trust ratio from its double sums, and the apply kernel.
#include "optim/lamb.h"

#include <algorithm>
#include <cmath>

#include "core/check.h"

namespace zt {

Lamb::Lamb(std::vector<TensorPart> tensors, ElementRange range, const LambOptions& options, const Backend& backend,
           Arena m, Arena v)
    : options_(options),
      k_(backend.ops()),
      range_(range),
      tensors_(std::move(tensors)),
      exp_avg_(std::move(m)),
      exp_avg_sq_(std::move(v)) {}

StatusOr<std::unique_ptr<Lamb>> Lamb::create(const ParamTable& table, ElementRange range, const LambOptions& options,
                                             const Backend& backend, bool own_state) {
  std::vector<TensorPart> tensors;
  for (const TensorSpec& s : table.specs()) {
    const size_t lo = std::max(s.offset, range.begin), hi = std::min(s.offset + s.numel, range.end);
    if (lo >= hi) continue;
    if (lo != s.offset || hi != s.offset + s.numel) {
      return Status::InvalidArgument("LAMB needs whole tensors (its trust ratio is a per-tensor norm), but the range [" +
                                     std::to_string(range.begin) + ", " + std::to_string(range.end) + ") cuts " +
                                     s.name + " [" + std::to_string(s.offset) + ", " +
                                     std::to_string(s.offset + s.numel) +
                                     "); LAMB runs without ZeRO sharding, tensor parallelism, offload and the "
                                     "parameter server");
    }
    tensors.push_back({s.name, lo - range.begin, hi - range.begin, s.weight_decay});
  }
  const size_t n = own_state ? range.size() : 0;
  ZT_ASSIGN_OR_RETURN(Arena m, backend.allocate(n, DType::kF32, "LAMB's first moments"));
  ZT_ASSIGN_OR_RETURN(Arena v, backend.allocate(n, DType::kF32, "LAMB's second moments"));
  return std::unique_ptr<Lamb>(new Lamb(std::move(tensors), range, options, backend, std::move(m), std::move(v)));
}

void Lamb::begin_step(const StepHyper& hyper) {
  ++steps_;
  coeffs_.clear();
  const double beta1 = std::isnan(hyper.momentum) ? options_.beta1 : hyper.momentum;
  const double beta2 = options_.beta2;
  const double t = static_cast<double>(steps_);
  step_size_ = options_.bias_correction ? hyper.lr * std::sqrt(1.0 - std::pow(beta2, t)) / (1.0 - std::pow(beta1, t))
                                        : hyper.lr;
  LambArgs& a = args_;
  a.grad_scale = static_cast<float>(hyper.grad_scale);
  a.beta1 = static_cast<float>(beta1);
  a.one_minus_beta1 = static_cast<float>(1.0 - beta1);
  a.beta2 = static_cast<float>(beta2);
  a.one_minus_beta2 = static_cast<float>(1.0 - beta2);
  a.eps = static_cast<float>(options_.eps);
  a.eps_inside_sqrt = options_.eps_inside_sqrt;
}

void Lamb::update(size_t offset, size_t n, float* params, const float* grads, float* const* states) {
  for (const TensorPart& t : tensors_) {
    if (t.end <= offset || t.begin >= offset + n) continue;
    ZT_CHECK(t.begin >= offset && t.end <= offset + n,
             "LAMB::update was given elements [%zu, %zu) of its range, which cut tensor %s [%zu, %zu): the trust "
             "ratio needs whole tensors (LAMB must run without ZeRO sharding, tensor parallelism and offload)",
             offset, offset + n, t.name.c_str(), t.begin, t.end);
    const size_t lo = t.begin - offset;
    const int64_t len = static_cast<int64_t>(t.end - t.begin);
    LambArgs a = args_;
    a.decay = t.decay ? static_cast<float>(options_.weight_decay) : 0.0f;
    LambSums sums;
    k_.lamb_moments(params + lo, grads + lo, states[0] + lo, states[1] + lo, len, a, &sums);
    const double w_norm = std::sqrt(sums.param_sq), u_norm = std::sqrt(sums.update_sq);
    double coeff = 1.0;
    if (w_norm != 0.0 && u_norm != 0.0) coeff = std::min(std::max(w_norm / u_norm, options_.min_coeff), options_.max_coeff);
    coeffs_.push_back(coeff);
    a.neg_step = static_cast<float>(-(step_size_ * coeff));
    k_.lamb_apply(params + lo, states[0] + lo, states[1] + lo, len, a);
  }
}

std::vector<StateTensor> Lamb::state() {
  if (exp_avg_.empty()) return {};
  return {{"exp_avg", exp_avg_.data(), exp_avg_.size()}, {"exp_avg_sq", exp_avg_sq_.data(), exp_avg_sq_.size()}};
}

}  // namespace zt
