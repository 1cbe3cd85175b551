// The Trainer's per-step view of the training-efficiency features; see efficiency.h.
#include "engine/efficiency.h"

#include <algorithm>

namespace zt {

Status validate_efficiency(const EfficiencyOptions& o, int n_layer, int tp, bool partition_activations,
                           bool activation_swap) {
  if (o.seqlen_curriculum) ZT_RETURN_IF_ERROR(CurriculumSchedule::validate(*o.seqlen_curriculum, o.curriculum_key));
  const std::string ltd = "/data_efficiency/data_routing/random_ltd";
  if (o.random_ltd.enabled) ZT_RETURN_IF_ERROR(RandomLtd::validate(o.random_ltd, n_layer, ltd));
  if (o.random_ltd.enabled && o.random_ltd_blocks != 0 && o.random_ltd_blocks != n_layer) {
    return Status::InvalidArgument(ltd + "/total_layer_num: " + std::to_string(o.random_ltd_blocks) + " but the model has " +
                                   std::to_string(n_layer) + " blocks");
  }
  if (o.layer_drop.enabled && tp > 1) {
    return Status::InvalidArgument("/progressive_layer_drop: not with tensor parallelism (parallel.tp " + std::to_string(tp) +
                                   "): a kept block scales its branch outputs, which the row-parallel sums do not");
  }
  if (o.layer_drop.enabled && !(o.layer_drop.theta > 0.0 && o.layer_drop.theta <= 1.0)) {
    return Status::InvalidArgument("/progressive_layer_drop/theta: must be in (0, 1] (the last block is scaled by 1/theta)");
  }
  if (o.layer_drop.enabled && !(o.layer_drop.gamma >= 0.0)) {
    return Status::InvalidArgument("/progressive_layer_drop/gamma: must be non-negative");
  }
  const std::string routed = o.layer_drop.enabled ? "/progressive_layer_drop" : ltd;
  if (o.routes_blocks() && ((partition_activations && tp > 1) || activation_swap)) {
    return Status::InvalidArgument(routed + ": routed blocks cannot keep partitioned or disk-offloaded activation "
                                            "checkpoints (activation_checkpointing.partition_activations with tp > 1, "
                                            "cpu_checkpointing)");
  }
  return Status::OK();
}

EfficiencySchedules::EfficiencySchedules(const EfficiencyOptions& options, int n_layer, uint64_t seed) : o_(options) {
  if (options.seqlen_curriculum) curriculum_.emplace(*options.seqlen_curriculum);
  if (options.layer_drop.enabled) layer_drop_.emplace(options.layer_drop, n_layer, seed);
  if (options.random_ltd.enabled) random_ltd_.emplace(options.random_ltd, n_layer, seed);
}

StepPlan EfficiencySchedules::plan(const std::vector<MicroBatch>& mbs, int B, int T, int64_t steps_done,
                                   int64_t first_micro, int64_t global_batch) {
  StepPlan p;
  p.seq_len = T;
  if (curriculum_) p.seq_len = static_cast<int>(std::min<int64_t>(T, curriculum_->update(steps_done + 1)));
  if (p.seq_len == T) {
    p.micro_batches = mbs;
  } else {  // Megatron's truncation: the first seq_len tokens and targets of every sequence
    for (const MicroBatch& mb : mbs) {
      for (const int32_t* src : {mb.tokens, mb.targets}) {
        std::vector<int32_t> cut;
        for (int b = 0; b < B; ++b) cut.insert(cut.end(), src + static_cast<size_t>(b) * T, src + static_cast<size_t>(b) * T + p.seq_len);
        p.storage.push_back(std::move(cut));
      }
      p.micro_batches.push_back({p.storage[p.storage.size() - 2].data(), p.storage.back().data()});
    }
  }
  theta_steps_ = steps_done;
  if (random_ltd_) p.reserved_length = random_ltd_->update(steps_done, global_batch);
  p.routes.resize(mbs.size());
  for (size_t m = 0; m < mbs.size(); ++m) {
    const int64_t micro = first_micro + static_cast<int64_t>(m);
    if (layer_drop_) p.routes[m] = layer_drop_->routes(steps_done, micro);
    if (random_ltd_) random_ltd_->route(&p.routes[m], steps_done, micro * B, B, p.seq_len);
  }
  return p;
}

Json EfficiencySchedules::state() const {
  Json j = Json::object();
  if (curriculum_) j["curriculum"] = {{"current_difficulty", curriculum_->current()}};
  if (random_ltd_) {
    const RandomLtdState s = random_ltd_->state();
    j["random_ltd"] = {{"current_value", s.current_value},
                       {"current_steps", s.current_steps},
                       {"consumed_layer_tokens", s.consumed_layer_tokens}};
  }
  if (layer_drop_) j["progressive_layer_drop"] = {{"theta", layer_drop_->theta_after(theta_steps_)}};
  return j;
}

Status EfficiencySchedules::set_state(const Json& j, const std::string& where) {
  auto integer = [&](const Json& o, const char* key, int64_t* out) {
    if (!o.is_object() || !o.contains(key) || !o[key].is_number_integer()) {
      return Status::InvalidArgument(where + ": the schedules' state has no integer " + key);
    }
    *out = o[key].get<int64_t>();
    return Status::OK();
  };
  if (curriculum_ && j.contains("curriculum")) {
    int64_t d = 0;
    ZT_RETURN_IF_ERROR(integer(j["curriculum"], "current_difficulty", &d));
    curriculum_->set_current(d);
  }
  if (random_ltd_ && j.contains("random_ltd")) {
    RandomLtdState s;
    ZT_RETURN_IF_ERROR(integer(j["random_ltd"], "current_value", &s.current_value));
    ZT_RETURN_IF_ERROR(integer(j["random_ltd"], "current_steps", &s.current_steps));
    ZT_RETURN_IF_ERROR(integer(j["random_ltd"], "consumed_layer_tokens", &s.consumed_layer_tokens));
    random_ltd_->set_state(s);
  }
  return Status::OK();
}

}  // namespace zt
