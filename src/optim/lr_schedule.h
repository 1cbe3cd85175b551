// Learning-rate schedules with DeepSpeed's names, parameters, defaults and arithmetic
// (deepspeed/runtime/lr_schedules.py): WarmupLR, WarmupDecayLR, WarmupCosineLR, OneCycle,
// plus Constant (no scheduler section). at(i) is the value after DeepSpeed's scheduler
// has been stepped to last_batch_iteration = i; i = -1 is its state at construction, so
// optimizer step k (0-based) runs with at(k - 1), exactly as DeepSpeed's engine does.
// Thread-safety: immutable; at() is a pure function.
#pragma once

#include <cmath>
#include <cstdint>

namespace zt {

enum class ScheduleKind { kConstant, kWarmupLR, kWarmupDecayLR, kWarmupCosineLR, kOneCycle };
enum class WarmupType { kLog, kLinear };

struct LrScheduleOptions {
  ScheduleKind kind = ScheduleKind::kConstant;
  double base_lr = 1e-3;  // the optimizer's lr (Constant; WarmupLR's default max; WarmupCosineLR's scale)
  // WarmupLR, WarmupDecayLR
  double warmup_min_lr = 0.0;
  double warmup_max_lr = NAN;  // NaN: base_lr for WarmupLR, 0.001 for WarmupDecayLR (DeepSpeed's defaults)
  int64_t warmup_num_steps = 1000;
  WarmupType warmup_type = WarmupType::kLog;
  int64_t total_num_steps = 0;  // WarmupDecayLR, WarmupCosineLR (required there)
  // WarmupCosineLR
  double warmup_min_ratio = 0.0;
  double cos_min_ratio = 0.0001;
  // OneCycle
  double cycle_min_lr = 0.0;
  double cycle_max_lr = 0.0;
  double decay_lr_rate = 0.0;
  int64_t cycle_first_step_size = 2000;
  int64_t cycle_second_step_size = -1;  // -1: same as first
  int64_t cycle_first_stair_count = 0;
  int64_t cycle_second_stair_count = -1;  // -1: same as first
  int64_t decay_step_size = 0;
  bool cycle_momentum = true;
  double cycle_min_mom = 0.8;
  double cycle_max_mom = 0.9;
  double decay_mom_rate = 0.0;
};

struct ScheduleValue {
  double lr = 0.0;
  double momentum = NAN;  // OneCycle with cycle_momentum: beta1 for Adam-family optimizers
};

class LrSchedule {
 public:
  explicit LrSchedule(const LrScheduleOptions& options) : o_(options) {}
  ScheduleValue at(int64_t last_batch_iteration) const;
  const LrScheduleOptions& options() const { return o_; }

 private:
  double warmup_gamma(int64_t it, int64_t warmup_steps) const;
  double one_cycle_scale(int64_t it) const;
  LrScheduleOptions o_;
};

const char* schedule_kind_name(ScheduleKind kind);

}  // namespace zt
