// DeepSpeed's `autotuning` block (autotuning/config.py, constants.py;
// docs/design/deepspeed-efficiency-rules.md 6) and its tuning space: with autotuning
// enabled, a list given for train_micro_batch_size_per_gpu or zero_optimization.stage is
// the set to try (DeepSpeed's user-defined tuning space; "all" stages is 0-3, and a stage
// written as a digit string is read as the number, as DeepSpeed's pydantic reads it); a list
// for another ZeRO key takes its first value (DeepSpeed's fast mode tunes only the stage
// and the micro-batch size). Each such change is a banner note.
#include <limits>

#include "config/key_tables.h"
#include "config/sections.h"

namespace zt::config_sections {

namespace {

constexpr int64_t kMaxInt = INT64_MAX;

bool enabled(const Json& root) {
  const Json* a = root.contains("autotuning") ? &root["autotuning"] : nullptr;
  return a != nullptr && a->is_object() && a->contains("enabled") && (*a)["enabled"] == true;
}

std::vector<int> stage_space(Json* stage, std::vector<std::string>* notes) {
  std::vector<int> out;
  if (stage->is_string() && stage->get<std::string>() == "all") {
    out = {0, 1, 2, 3};
  } else if (stage->is_string() && stage->get<std::string>().size() == 1 && isdigit(stage->get<std::string>()[0])) {
    *stage = stage->get<std::string>()[0] - '0';
    notes->push_back("/zero_optimization/stage: \"" + std::to_string(stage->get<int>()) + "\" read as the number");
    return out;
  } else if (stage->is_array() && !stage->empty()) {
    for (const Json& v : *stage) {
      if (v.is_number_integer()) out.push_back(v.get<int>());
    }
  } else {
    return out;
  }
  *stage = out.empty() ? Json(0) : Json(out[0]);
  notes->push_back("/zero_optimization/stage: autotuning tries stages " + Json(out).dump());
  return out;
}

}  // namespace

Status extract_tuning_space(Json* root, AutotuningConfig* a, std::vector<std::string>* notes) {
  if (!enabled(*root)) return Status::OK();
  Json& mbs = (*root)["train_micro_batch_size_per_gpu"];
  if (mbs.is_array() && !mbs.empty()) {
    for (const Json& v : mbs) {
      if (!v.is_number_integer() || v.get<int64_t>() < 1) {
        return Status::InvalidArgument("/train_micro_batch_size_per_gpu: a tuning list of positive integers, got " + mbs.dump());
      }
      a->micro_batches.push_back(v.get<int64_t>());
    }
    mbs = a->micro_batches[0];
    notes->push_back("/train_micro_batch_size_per_gpu: autotuning tries " + Json(a->micro_batches).dump());
  } else if (mbs.is_null()) {
    root->erase("train_micro_batch_size_per_gpu");
  }
  if (root->contains("zero_optimization") && (*root)["zero_optimization"].is_object()) {
    Json& z = (*root)["zero_optimization"];
    if (z.contains("stage")) a->stages = stage_space(&z["stage"], notes);
    for (auto it = z.begin(); it != z.end(); ++it) {
      if (!it->is_array() || it->empty()) continue;
      *it = Json((*it)[0]);
      notes->push_back("/zero_optimization/" + it.key() + ": autotuning in fast mode tunes only the stage and the "
                       "micro-batch size: its first value " + it->dump() + " is used");
    }
  }
  return Status::OK();
}

void parse_autotuning(JsonReader& root, AutotuningConfig* a) {
  auto r = root.object("autotuning");
  if (!r) return;
  a->enabled = r->boolean("enabled", false);
  a->fast = r->boolean("fast", true);
  if (r->has("results_dir")) a->results_dir = r->string("results_dir", a->results_dir);
  if (r->has("exps_dir")) a->exps_dir = r->string("exps_dir", a->exps_dir);
  a->overwrite = r->boolean("overwrite", true);
  a->metric = r->choice("metric", "throughput", {"throughput", "latency", "flops"});
  if (a->metric == "flops" && a->enabled) refuse(*r, "metric");
  a->start_profile_step = r->integer("start_profile_step", r->integer("start_step", 3, 1, kMaxInt), 1, kMaxInt);
  a->end_profile_step = r->integer("end_profile_step", r->integer("end_step", 5, 1, kMaxInt), 1, kMaxInt);
  if (a->end_profile_step < a->start_profile_step) r->fail("end_profile_step", "is before start_profile_step");
  a->max_train_batch_size = r->has("max_train_batch_size") ? r->integer("max_train_batch_size", 0, 1, kMaxInt) : 0;
  r->integer("min_train_batch_size", 1, 1, kMaxInt);
  a->min_micro_batch = r->integer("min_train_micro_batch_size_per_gpu", 1, 1, kMaxInt);
  a->max_micro_batch = r->integer("max_train_micro_batch_size_per_gpu", 1024, 1, kMaxInt);
  a->num_tuning_micro_batch_sizes = r->integer("num_tuning_micro_batch_sizes", 3, 1, 1024);
  a->tuner_num_trials = r->integer("tuner_num_trials", 50, 1, kMaxInt);
  r->integer("tuner_early_stopping", 5, 1, kMaxInt);
  r->choice("tuner_type", "gridsearch", {"gridsearch", "random", "model_based"});
  r->integer("mp_size", 1, 1, kMaxInt);
  for (const char* k : {"metric_path", "model_info_path", "model_info", "arg_mappings", "num_nodes", "num_gpus"}) r->raw(k);
  r->done();
}

}  // namespace zt::config_sections
