// CurriculumSchedule: DeepSpeed's curriculum-learning difficulty schedules
// (runtime/data_pipeline/curriculum_scheduler.py), for the legacy top-level
// `curriculum_learning` block and each metric of
// `data_efficiency.data_sampling.curriculum_learning` (docs/design/efficiency.md).
//
// value(s) at a 1-based schedule step s:
//   fixed_linear / fixed_root: F = floor((s / total_curriculum_step)^(1 / root_degree)
//     * (max - min) + min) in double, then d = min(F - F mod difficulty_step, max)
//     (fixed_linear has root_degree 1; nothing clamps s: past the total only min() holds d);
//   fixed_discrete: difficulty[last] if s > max_step[last], else difficulty[first i with
//     s <= max_step[i]].
// The schedule is stateful as DeepSpeed's is: current starts at min_difficulty and
// update(s) replaces it with value(s) only while it is below max_difficulty (then it is
// frozen); the engine calls update(global_step + 1) once per optimizer step, and
// checkpoints keep current.
// Thread-safety: plain value.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"
#include "data/efficiency_options.h"

namespace zt {

class CurriculumSchedule {
 public:
  explicit CurriculumSchedule(const CurriculumOptions& options) : o_(options), current_(options.min_difficulty) {}
  // The options' own consistency, errors naming the key under `where` (a JSON pointer).
  static Status validate(const CurriculumOptions& options, const std::string& where);

  int64_t value(int64_t s) const;
  int64_t update(int64_t s);  // DeepSpeed's update_difficulty
  int64_t current() const { return current_; }
  void set_current(int64_t d) { current_ = d; }  // from a checkpoint
  const CurriculumOptions& options() const { return o_; }

 private:
  CurriculumOptions o_;
  int64_t current_;
};

}  // namespace zt
