// LAMB: per-step scalars in double (as AdamW), then per whole tensor the moments kernel,
// which adds its double sums into backend memory, and the apply kernel, which takes the
// trust ratio from them there. The host reads the sums only when asked (trust_ratios()).
#include "optim/lamb.h"

#include <algorithm>
#include <cmath>

#include "core/check.h"

namespace zt {

Lamb::Lamb(std::vector<TensorPart> tensors, ElementRange range, const LambOptions& options, const Backend& backend,
           Arena m, Arena v, Arena sums)
    : options_(options),
      backend_(backend),
      k_(backend.ops()),
      range_(range),
      tensors_(std::move(tensors)),
      exp_avg_(std::move(m)),
      exp_avg_sq_(std::move(v)),
      sums_(std::move(sums)) {}

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
  // Two doubles (four f32 elements) of sums per tensor.
  ZT_ASSIGN_OR_RETURN(Arena sums, backend.allocate(4 * tensors.size(), DType::kF32, "LAMB's per-tensor sums"));
  return std::unique_ptr<Lamb>(
      new Lamb(std::move(tensors), range, options, backend, std::move(m), std::move(v), std::move(sums)));
}

void Lamb::begin_step(const StepHyper& hyper) {
  ++steps_;
  sums_.zero();
  const double beta1 = std::isnan(hyper.momentum) ? options_.beta1 : hyper.momentum;
  const double beta2 = options_.beta2;
  const double t = static_cast<double>(steps_);
  LambArgs& a = args_;
  a.step_size = options_.bias_correction ? hyper.lr * std::sqrt(1.0 - std::pow(beta2, t)) / (1.0 - std::pow(beta1, t))
                                         : hyper.lr;
  a.min_coeff = options_.min_coeff;
  a.max_coeff = options_.max_coeff;
  a.grad_scale = static_cast<float>(hyper.grad_scale);
  a.beta1 = static_cast<float>(beta1);
  a.one_minus_beta1 = static_cast<float>(1.0 - beta1);
  a.beta2 = static_cast<float>(beta2);
  a.one_minus_beta2 = static_cast<float>(1.0 - beta2);
  a.eps = static_cast<float>(options_.eps);
  a.eps_inside_sqrt = options_.eps_inside_sqrt;
}

void Lamb::update(size_t offset, size_t n, float* params, const float* grads, float* const* states) {
  auto* sums = sums_.as<LambSums>();
  for (size_t ti = 0; ti < tensors_.size(); ++ti) {
    const TensorPart& t = tensors_[ti];
    if (t.end <= offset || t.begin >= offset + n) continue;
    ZT_CHECK(t.begin >= offset && t.end <= offset + n,
             "LAMB::update was given elements [%zu, %zu) of its range, which cut tensor %s [%zu, %zu): the trust "
             "ratio needs whole tensors (LAMB must run without ZeRO sharding, tensor parallelism and offload)",
             offset, offset + n, t.name.c_str(), t.begin, t.end);
    const size_t lo = t.begin - offset;
    const int64_t len = static_cast<int64_t>(t.end - t.begin);
    LambArgs a = args_;
    a.decay = t.decay ? static_cast<float>(options_.weight_decay) : 0.0f;
    k_.lamb_moments(params + lo, grads + lo, states[0] + lo, states[1] + lo, len, a, sums + ti);
    k_.lamb_apply(params + lo, states[0] + lo, states[1] + lo, len, a, sums + ti);
  }
}

std::vector<double> Lamb::trust_ratios() const {
  std::vector<LambSums> sums(tensors_.size());
  backend_.copy_to_host(sums.data(), sums_.as<LambSums>(), sums.size() * sizeof(LambSums));
  std::vector<double> out;
  for (const LambSums& s : sums) out.push_back(lamb_trust_ratio(s, options_.min_coeff, options_.max_coeff));
  return out;
}

std::vector<StateTensor> Lamb::state() {
  if (exp_avg_.empty()) return {};
  return {{"exp_avg", exp_avg_.data(), exp_avg_.size()}, {"exp_avg_sq", exp_avg_sq_.data(), exp_avg_sq_.size()}};
}

}  // namespace zt
