// The options of DeepSpeed's training-efficiency features, as the config reads them and
// the engine applies them: curriculum schedules (data/curriculum_schedule.h), progressive
// layer drop (engine/layer_drop.h), random-LTD (engine/random_ltd.h) and their union
// (engine/efficiency.h), compression and the eigenvalue estimate. docs/design/deepspeed-efficiency-rules.md states each rule.
// Thread-safety: plain values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace zt {

enum class CurriculumKind { kFixedLinear, kFixedRoot, kFixedDiscrete };

struct CurriculumOptions {
  int64_t min_difficulty = 0;
  int64_t max_difficulty = 0;
  CurriculumKind kind = CurriculumKind::kFixedLinear;
  int64_t total_curriculum_step = 0;  // fixed_linear, fixed_root
  int64_t difficulty_step = 1;        // fixed_linear, fixed_root
  double root_degree = 1.0;           // fixed_root
  std::vector<int64_t> difficulty;    // fixed_discrete: one more than max_step
  std::vector<int64_t> max_step;      // fixed_discrete
};

struct LayerDropOptions {
  bool enabled = false;
  double theta = 0.5;    // theta_bar: the keep probability the schedule decays to
  double gamma = 0.001;  // the decay rate per step
};

struct RandomLtdOptions {
  bool enabled = false;
  std::vector<int> layers;  // random_ltd_layer_id: the blocks that drop tokens
  int64_t min_value = 0;
  int64_t max_value = 0;
  int64_t require_steps = 1;
  int64_t seq_per_step = 1;
};

// compression_training (DeepSpeed's compression/config.py; deepspeed-efficiency-rules.md 5):
// the modules of a group are regular expressions searched in zerotrain's HuggingFace-style
// module names (transformer.h.0.attn.c_attn, model.layers.0.self_attn.q_proj, ...).
struct WeightQuantGroup {
  std::string name;                  // the config's group name (wq1)
  std::vector<std::string> modules;  // regular expressions
  int start_bits = 8;
  int target_bits = 8;
  int64_t period = 1;                // quantization_period
};

struct WeightQuantOptions {
  bool enabled = false;
  bool in_forward = false;       // quantize_weight_in_forward: target bits in every forward; else MoQ (fp16)
  int64_t schedule_offset = 0;
  int64_t groups = 1;            // quantize_groups
  bool symmetric = true;
  bool mixed = false;            // fp16_mixed_quantize
  double change_ratio = 0.001;   // fp16_mixed_quantize.quantize_change_ratio
  std::vector<WeightQuantGroup> groups_of_modules;
};

struct ActQuantGroup {
  std::string name;
  std::vector<std::string> modules;
  int bits = 8;  // 4 or 8
};

struct ActivationQuantOptions {
  bool enabled = false;
  bool symmetric = true;
  int64_t schedule_offset = 1000;  // DeepSpeed's code default
  std::vector<ActQuantGroup> groups_of_modules;
};

struct CompressionOptions {
  WeightQuantOptions weight;
  ActivationQuantOptions activation;
  bool any() const { return weight.enabled || activation.enabled; }
};

// DeepSpeed's eigenvalue block (runtime/eigenvalue.py; deepspeed-efficiency-rules.md 4):
// the power-iteration estimate of each block's dominant Hessian eigenvalue, every
// gas_boundary_resolution steps, logged to the monitors (engine/eigenvalue.h).
struct EigenvalueOptions {
  bool enabled = false;
  bool verbose = false;
  int max_iter = 100;
  double tol = 1e-2;
  double stability = 1e-6;
  int64_t gas_boundary_resolution = 1;
  int layer_num = 0;  // the first layer_num blocks; 0: every block
};

struct EfficiencyOptions {
  std::optional<CurriculumOptions> seqlen_curriculum;
  std::string curriculum_key = "/curriculum_learning";  // where the config gave it (error messages)
  LayerDropOptions layer_drop;
  RandomLtdOptions random_ltd;
  CompressionOptions compression;
  EigenvalueOptions eigenvalue;
  int64_t random_ltd_blocks = 0;  // total_layer_num as given (0: not given); must be the model's depth
  bool routes_blocks() const { return layer_drop.enabled || random_ltd.enabled; }
};

}  // namespace zt
