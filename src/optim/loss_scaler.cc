// LossScaler: DeepSpeed's dynamic loss-scale rule (see loss_scaler.h).
#include "optim/loss_scaler.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace zt {

namespace {
constexpr double kScaleFactor = 2.0;  // DeepSpeed's scale_factor
}  // namespace

Status LossScaler::validate(const LossScalerOptions& o) {
  if (!(o.loss_scale >= 0.0) || std::isinf(o.loss_scale)) {
    return Status::InvalidArgument("/fp16/loss_scale: expected 0 (dynamic) or a positive finite scale");
  }
  if (o.initial_scale_power < 0 || o.initial_scale_power > 120) {
    return Status::InvalidArgument("/fp16/initial_scale_power: expected an integer 0..120, got " +
                                   std::to_string(o.initial_scale_power));
  }
  if (o.loss_scale_window < 1) {
    return Status::InvalidArgument("/fp16/loss_scale_window: expected a positive integer, got " +
                                   std::to_string(o.loss_scale_window));
  }
  if (o.hysteresis < 1) {
    return Status::InvalidArgument("/fp16/hysteresis: expected a positive integer, got " + std::to_string(o.hysteresis));
  }
  if (!(o.min_loss_scale > 0.0) || std::isinf(o.min_loss_scale)) {
    return Status::InvalidArgument("/fp16/min_loss_scale: expected a positive finite scale");
  }
  return Status::OK();
}

LossScaler::LossScaler(const LossScalerOptions& options) : options_(options) {
  state_.scale = dynamic() ? std::ldexp(1.0, options.initial_scale_power) : options.loss_scale;
  state_.hysteresis_left = options.hysteresis;
}

Status LossScaler::update(bool overflow) {
  if (!dynamic()) {
    ++state_.iteration;
    return Status::OK();
  }
  if (overflow) {
    if (options_.hysteresis == 1 || state_.hysteresis_left == 1) {
      if (state_.scale == options_.min_loss_scale) {
        return Status::FailedPrecondition(
            "fp16 loss scale already at its minimum (" + std::to_string(options_.min_loss_scale) + ") and step " +
            std::to_string(state_.iteration + 1) + " overflowed again: the gradients do not fit fp16; use bf16 "
            "(bf16.enabled) or lower the learning rate");
      }
      state_.scale = std::max(state_.scale / kScaleFactor, options_.min_loss_scale);
    } else {
      --state_.hysteresis_left;
    }
    state_.last_overflow = state_.iteration;
  } else {
    if (options_.consecutive_hysteresis) state_.hysteresis_left = options_.hysteresis;
    if ((state_.iteration - state_.last_overflow) % options_.loss_scale_window == 0) {
      if (!options_.consecutive_hysteresis) state_.hysteresis_left = options_.hysteresis;
      state_.scale *= kScaleFactor;
    }
  }
  ++state_.iteration;
  return Status::OK();
}

}  // namespace zt
