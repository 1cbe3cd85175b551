// SGD update loop (memory-bound and rarely used at scale: plain auto-vectorised C++).
#include "optim/sgd.h"

#include <cmath>
#include <cstdint>

namespace zt {

Sgd::Sgd(const ParamTable& table, ElementRange range, const SgdOptions& options)
    : options_(options),
      range_(range),
      segments_(decay_segments(table, range)),
      momentum_buffer_(options.momentum != 0.0 ? range.size() : 0) {}

void Sgd::step(float* params, const float* grads, const StepHyper& hyper) {
  const bool first = steps_ == 0;
  ++steps_;
  const float lr = static_cast<float>(hyper.lr);
  // DeepSpeed's OneCycle cycles momentum only for optimizers with betas, never SGD's
  // momentum, so hyper.momentum is ignored here.
  const float mom = static_cast<float>(options_.momentum);
  const float damp = static_cast<float>(1.0 - options_.dampening);
  const float scale = static_cast<float>(hyper.grad_scale);
  const bool use_momentum = !momentum_buffer_.empty();
  float* buf = momentum_buffer_.data();
  for (const DecaySegment& seg : segments_) {
    const float wd = seg.decay ? static_cast<float>(options_.weight_decay) : 0.0f;
    const int64_t lo = static_cast<int64_t>(seg.begin), hi = static_cast<int64_t>(seg.end);
#pragma omp parallel for schedule(static)
    for (int64_t i = lo; i < hi; ++i) {
      float g = grads[i] * scale;
      if (wd != 0.0f) g = g + wd * params[i];
      if (use_momentum) {
        buf[i] = first ? g : mom * buf[i] + damp * g;
        g = options_.nesterov ? g + mom * buf[i] : buf[i];
      }
      params[i] = params[i] - lr * g;
    }
  }
}

std::vector<StateTensor> Sgd::state() {
  if (momentum_buffer_.empty()) return {};
  return {{"momentum_buffer", momentum_buffer_.data(), momentum_buffer_.size()}};
}

}  // namespace zt
