// DeepSpeed's curriculum schedules; see curriculum_schedule.h.
#include "data/curriculum_schedule.h"

#include <algorithm>
#include <cmath>

namespace zt {

Status CurriculumSchedule::validate(const CurriculumOptions& o, const std::string& where) {
  auto bad = [&](const std::string& key, const std::string& why) { return Status::InvalidArgument(where + "/" + key + ": " + why); };
  if (o.max_difficulty < o.min_difficulty) return bad("max_difficulty", "is below min_difficulty");
  if (o.kind == CurriculumKind::kFixedDiscrete) {
    if (o.difficulty.empty() || o.difficulty.size() != o.max_step.size() + 1) {
      return bad("schedule_config/difficulty", "needs one more entry than max_step (DeepSpeed's rule), got " +
                                                   std::to_string(o.difficulty.size()) + " and " +
                                                   std::to_string(o.max_step.size()));
    }
    for (int64_t d : o.difficulty) {
      if (d < 1) return bad("schedule_config/difficulty", "every difficulty must be at least 1");
    }
    return Status::OK();
  }
  if (o.total_curriculum_step < 1) return bad("schedule_config/total_curriculum_step", "must be at least 1");
  if (o.difficulty_step < 1) return bad("schedule_config/difficulty_step", "must be at least 1 (DeepSpeed divides by it)");
  if (o.kind == CurriculumKind::kFixedRoot && !(o.root_degree > 0)) return bad("schedule_config/root_degree", "must be positive");
  const CurriculumSchedule s(o);
  if (s.value(1) < 1) {
    return bad("min_difficulty", std::to_string(o.min_difficulty) + " rounds down to a difficulty of 0 with difficulty_step " +
                                     std::to_string(o.difficulty_step) + " (an empty batch in DeepSpeed): make it a multiple");
  }
  return Status::OK();
}

int64_t CurriculumSchedule::value(int64_t s) const {
  if (o_.kind == CurriculumKind::kFixedDiscrete) {
    if (s > o_.max_step.back()) return o_.difficulty.back();
    for (size_t i = 0; i < o_.max_step.size(); ++i) {
      if (s <= o_.max_step[i]) return o_.difficulty[i];
    }
    return o_.difficulty.back();
  }
  const double root = o_.kind == CurriculumKind::kFixedLinear ? 1.0 : o_.root_degree;
  const double x = std::pow(static_cast<double>(s) / static_cast<double>(o_.total_curriculum_step), 1.0 / root);
  int64_t f = static_cast<int64_t>(std::floor(x * static_cast<double>(o_.max_difficulty - o_.min_difficulty) +
                                              static_cast<double>(o_.min_difficulty)));
  f -= f % o_.difficulty_step;
  return std::min(f, o_.max_difficulty);
}

int64_t CurriculumSchedule::update(int64_t s) {
  if (current_ < o_.max_difficulty) current_ = value(s);
  return current_;
}

}  // namespace zt
