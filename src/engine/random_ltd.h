// Random-LTD (DeepSpeed's data_efficiency.data_routing.random_ltd): random layerwise token
// dropping, as DeepSpeed schedules it (runtime/data_pipeline/data_routing/scheduler.py)
// and applies it (basic_layer.py; docs/design/deepspeed-efficiency-rules.md):
//   the reserved length after g optimizer steps (g = 0 first) is DeepSpeed's fixed_linear
//   value r = min(F - F mod seq_per_step, max_value), F = floor(g / require_steps *
//   (max_value - min_value) + min_value), frozen once it reaches max_value (the same
//   arithmetic as a curriculum schedule: data/curriculum_schedule.h);
//   while r < the batch's sequence length, each listed block runs on r positions of each
//   sequence, drawn uniformly without replacement and sorted (one draw per block and
//   sample), the other tokens bypassing it (nn/block_route.h);
//   consumed_layer_tokens grows by global_batch * (r * dropped blocks + max_value * the
//   other blocks) at the first step of each g, as DeepSpeed's bookkeeping does.
// The draw is seeded by (seed, step, global sample index, block), so it is the same on every
// rank and layout that sees the sample, and after a resume.
// Thread-safety: one training thread.
#pragma once

#include <cstdint>
#include <vector>

#include "core/status.h"
#include "data/curriculum_schedule.h"
#include "data/efficiency_options.h"
#include "nn/block_route.h"

namespace zt {

struct RandomLtdState {
  int64_t current_value = 0;
  int64_t current_steps = -1;  // the g of the last update
  int64_t consumed_layer_tokens = 0;
};

class RandomLtd {
 public:
  RandomLtd(const RandomLtdOptions& options, int n_layer, uint64_t seed);
  static Status validate(const RandomLtdOptions& options, int n_layer, const std::string& where);
  // The reserved length for the step after `steps_done` steps (DeepSpeed's update_seq).
  int64_t update(int64_t steps_done, int64_t global_batch);
  // Sets the listed blocks of `routes` (not skipped ones) to keep r of T positions of the
  // micro-batch's B sequences, whose first global sample index is `first_sample`.
  void route(std::vector<BlockRoute>* routes, int64_t steps_done, int64_t first_sample, int B, int T) const;
  RandomLtdState state() const;
  void set_state(const RandomLtdState& s);

 private:
  RandomLtdOptions o_;
  int n_layer_;
  uint64_t seed_;
  CurriculumSchedule schedule_;
  RandomLtdState state_;
};

}  // namespace zt
