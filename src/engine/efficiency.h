// DeepSpeed's training-efficiency features as the Trainer applies them to each step
// (docs/design/efficiency.md):
//   - curriculum learning on sequence length (the legacy `curriculum_learning` block, or a
//     `seqlen` metric of data_efficiency's curriculum): the step after k steps truncates
//     every sequence to min(d, seq_len) tokens, d = schedule.update(k + 1)
//     (data/curriculum_schedule.h), as Megatron-DeepSpeed does;
//   - progressive layer drop (engine/layer_drop.h) and random-LTD (engine/random_ltd.h):
//     per micro-batch block routes (nn/block_route.h), drawn from counters so that every
//     rank and layout that sees a global micro-batch draws the same.
// Their state (the curriculum's current difficulty, random-LTD's schedule and token count)
// goes into checkpoints as the manifest's engine "schedules".
// Thread-safety: one training thread.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "data/curriculum_schedule.h"
#include "engine/layer_drop.h"
#include "engine/random_ltd.h"
#include "io/json_strict.h"
#include "nn/gpt_training.h"

namespace zt {

// One step's shape: its sequence length, its micro-batches (truncated copies when the
// curriculum shortens them) and each micro-batch's block routes.
struct StepPlan {
  int seq_len = 0;
  std::vector<MicroBatch> micro_batches;
  std::vector<std::vector<BlockRoute>> routes;  // per local micro-batch (empty: every block whole)
  std::vector<std::vector<int32_t>> storage;    // the truncated copies
  int64_t reserved_length = 0;                  // random-LTD's r this step (0 when off)
};

// The options' own checks and what they do not combine with, errors naming the config key:
// layer drop's branch scaling needs tp = 1; routed blocks cannot keep partitioned
// (tp > 1) or disk-stashed checkpoints.
Status validate_efficiency(const EfficiencyOptions& options, int n_layer, int tp, bool partition_activations,
                           bool activation_swap);

class EfficiencySchedules {
 public:
  EfficiencySchedules(const EfficiencyOptions& options, int n_layer, uint64_t seed);
  // The plan of the step after `steps_done` steps for this rank's micro-batches (B x T
  // each), which are global micro-batches first_micro, first_micro + 1, ...;
  // global_batch: sequences per step over every rank.
  StepPlan plan(const std::vector<MicroBatch>& micro_batches, int B, int T, int64_t steps_done, int64_t first_micro,
                int64_t global_batch);
  Json state() const;  // {} when every feature is off
  Status set_state(const Json& state, const std::string& where);

 private:
  EfficiencyOptions o_;
  std::optional<CurriculumSchedule> curriculum_;
  std::optional<LayerDrop> layer_drop_;
  std::optional<RandomLtd> random_ltd_;
  int64_t theta_steps_ = 0;  // steps done at the last plan (the layer-drop theta it used)
};

}  // namespace zt
