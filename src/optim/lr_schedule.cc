// DeepSpeed's schedule formulas, transcribed case by case.
#include "optim/lr_schedule.h"

#include <algorithm>

namespace zt {

const char* schedule_kind_name(ScheduleKind kind) {
  switch (kind) {
    case ScheduleKind::kConstant: return "Constant";
    case ScheduleKind::kWarmupLR: return "WarmupLR";
    case ScheduleKind::kWarmupDecayLR: return "WarmupDecayLR";
    case ScheduleKind::kWarmupCosineLR: return "WarmupCosineLR";
    case ScheduleKind::kOneCycle: return "OneCycle";
  }
  return "?";
}

// Warmup progress in [0, 1) for it < warmup_steps (warmup_steps already >= 2).
double LrSchedule::warmup_gamma(int64_t it, int64_t warmup_steps) const {
  if (o_.warmup_type == WarmupType::kLog) {
    return (1.0 / std::log(static_cast<double>(warmup_steps))) * std::log(static_cast<double>(it + 1));
  }
  return static_cast<double>(it) / static_cast<double>(warmup_steps);
}

double LrSchedule::one_cycle_scale(int64_t it) const {
  const double first = static_cast<double>(o_.cycle_first_step_size);
  const double second = o_.cycle_second_step_size < 0 ? first : static_cast<double>(o_.cycle_second_step_size);
  const double total = first + second;
  const double step_ratio = first / total;
  const int64_t first_stairs = o_.cycle_first_stair_count;
  const int64_t second_stairs = o_.cycle_second_stair_count < 0 ? first_stairs : o_.cycle_second_stair_count;
  const double batch_iteration = static_cast<double>(it + 1);
  const double cycle = std::floor(1.0 + batch_iteration / total);
  const double x = 1.0 + batch_iteration / total - cycle;
  double scale;
  int64_t stairs;
  if (x <= step_ratio) {
    scale = x / step_ratio;
    stairs = first_stairs;
  } else {
    scale = (x - 1.0) / (step_ratio - 1.0);
    stairs = second_stairs;
  }
  if (stairs > 0) {
    const double cycle_iteration = std::fmod(batch_iteration, total);
    const double position = cycle_iteration <= first ? cycle_iteration * static_cast<double>(stairs) / first
                                                     : (total - cycle_iteration) * static_cast<double>(stairs) / second;
    scale = std::floor(position) / static_cast<double>(stairs);
  }
  return scale;
}

ScheduleValue LrSchedule::at(int64_t it) const {
  ScheduleValue v;
  switch (o_.kind) {
    case ScheduleKind::kConstant:
      v.lr = o_.base_lr;
      return v;
    case ScheduleKind::kWarmupLR:
    case ScheduleKind::kWarmupDecayLR: {
      const double default_max = o_.kind == ScheduleKind::kWarmupLR ? o_.base_lr : 0.001;
      const double max_lr = std::isnan(o_.warmup_max_lr) ? default_max : o_.warmup_max_lr;
      const int64_t warmup = std::max<int64_t>(2, o_.warmup_num_steps);
      if (it < 0) {
        v.lr = o_.warmup_min_lr;
        return v;
      }
      double gamma = 1.0;
      if (it < warmup) {
        gamma = warmup_gamma(it, warmup);
      } else if (o_.kind == ScheduleKind::kWarmupDecayLR) {
        gamma = std::max(0.0, static_cast<double>(o_.total_num_steps - it) /
                                  std::max(1.0, static_cast<double>(o_.total_num_steps - warmup)));
      }
      v.lr = o_.warmup_min_lr + (max_lr - o_.warmup_min_lr) * gamma;
      return v;
    }
    case ScheduleKind::kWarmupCosineLR: {
      if (it < 0) {
        v.lr = 0.0;
        return v;
      }
      const int64_t warmup = std::max<int64_t>(2, o_.warmup_num_steps);
      double ratio;
      if (it < warmup) {
        ratio = o_.warmup_min_ratio + warmup_gamma(it, warmup) * (1.0 - o_.warmup_min_ratio);
      } else {
        const double real_last = static_cast<double>(it - warmup + 1);
        const double real_total = static_cast<double>(std::max<int64_t>(1, o_.total_num_steps - warmup));
        const double progress = std::min(1.0, real_last / real_total);
        const double cosine = (1.0 + std::cos(M_PI * progress)) / 2.0;
        ratio = std::max(0.0, o_.cos_min_ratio + (1.0 - o_.cos_min_ratio) * cosine);
      }
      v.lr = o_.base_lr * ratio;
      return v;
    }
    case ScheduleKind::kOneCycle: {
      const double first = static_cast<double>(o_.cycle_first_step_size);
      const double second = o_.cycle_second_step_size < 0 ? first : static_cast<double>(o_.cycle_second_step_size);
      const double total = first + second;
      if (it < 0) {  // constructor state: lr and momentum set to their cycle minimums
        v.lr = o_.cycle_min_lr;
        if (o_.cycle_momentum) v.momentum = o_.cycle_min_mom;
        return v;
      }
      const bool skip_decay = o_.decay_step_size == 0;
      if (static_cast<double>(it) < total) {
        const double scale = one_cycle_scale(it);
        v.lr = o_.cycle_min_lr + (o_.cycle_max_lr - o_.cycle_min_lr) * scale;
        if (o_.cycle_momentum) v.momentum = o_.cycle_max_mom - (o_.cycle_max_mom - o_.cycle_min_mom) * scale;
        return v;
      }
      const double interval =
          skip_decay ? 0.0 : static_cast<double>(it - static_cast<int64_t>(total) + 1) / o_.decay_step_size;
      v.lr = (skip_decay || o_.decay_lr_rate == 0.0) ? o_.cycle_min_lr
                                                     : o_.cycle_min_lr / (1.0 + o_.decay_lr_rate * interval);
      if (o_.cycle_momentum) {
        v.momentum = (skip_decay || o_.decay_mom_rate == 0.0) ? o_.cycle_max_mom
                                                              : o_.cycle_max_mom * (1.0 + o_.decay_mom_rate * interval);
      }
      return v;
    }
  }
  return v;
}

}  // namespace zt
