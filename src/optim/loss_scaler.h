// LossScaler: fp16's loss scaling with DeepSpeed's semantics (runtime/fp16/loss_scaler.py),
// the building block issue 13's fp16 mode stands on.
//
// The loss is multiplied by scale() before backward and the gradients divided by it after.
// A step whose gradients hold an inf or NaN on any rank (the caller all-reduces the flag)
// is skipped on every rank, and update(true) is called; a clean step calls update(false).
//  - Static (loss_scale > 0): the scale never changes; an overflowing step is still skipped.
//  - Dynamic (loss_scale = 0): starts at 2^initial_scale_power. On an overflow, while the
//    hysteresis budget (`hysteresis` overflows) is not used up only the budget drops;
//    once it is, the scale is divided by 2, floored at min_loss_scale, and an overflow
//    at the minimum is an error (DeepSpeed raises "Current loss scale already at minimum").
//    After loss_scale_window iterations without an overflow (counted from the last one)
//    the scale doubles and the budget is restored; with consecutive_hysteresis the budget
//    is restored by every clean step.
// state()/set_state() carry everything to checkpoints, so a resume continues bit for bit.
// Thread-safety: plain value; one thread updates it.
#pragma once

#include <cstdint>

#include "core/status.h"

namespace zt {

struct LossScalerOptions {
  double loss_scale = 0.0;           // fp16.loss_scale: 0 = dynamic, > 0 = static
  int initial_scale_power = 16;      // fp16.initial_scale_power
  int64_t loss_scale_window = 1000;  // fp16.loss_scale_window
  int hysteresis = 2;                // fp16.hysteresis
  bool consecutive_hysteresis = false;
  double min_loss_scale = 1.0;       // fp16.min_loss_scale
};

struct LossScalerState {
  double scale = 1.0;
  int64_t iteration = 0;           // updates so far
  int64_t last_overflow = -1;      // iteration of the last overflow, -1 = none
  int hysteresis_left = 0;
};

class LossScaler {
 public:
  // REQUIRES: valid options (validate() OK).
  explicit LossScaler(const LossScalerOptions& options);
  // Names the fp16 key and the allowed values of the first bad option.
  static Status validate(const LossScalerOptions& options);

  double scale() const { return state_.scale; }
  bool dynamic() const { return options_.loss_scale == 0.0; }
  // After a step: overflow = an inf/NaN gradient anywhere. An error when a dynamic scale
  // overflows at its minimum: training cannot go on in fp16.
  Status update(bool overflow);

  const LossScalerState& state() const { return state_; }
  void set_state(const LossScalerState& s) { state_ = s; }

 private:
  LossScalerOptions options_;
  LossScalerState state_;
};

}  // namespace zt
