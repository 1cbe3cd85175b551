// Aliases and "auto" (normalize.h). HuggingFace's rules are those of transformers'
// integrations/deepspeed.py (HfTrainerDeepSpeedConfig.trainer_config_process and
// trainer_config_finalize), with zerotrain's own sections standing in for the
// TrainingArguments: training.steps for max_steps, the model for hidden_size.
#include "config/normalize.h"

#include <algorithm>

#include "config/key_tables.h"
#include "config/sections.h"
#include "core/cpu_info.h"

namespace zt {

namespace {

using Ptr = Json::json_pointer;

std::string brief(const Json& v) { return json_brief(v); }

// The value at pointer p, or null when any part of the path is missing or not an object.
const Json* find(const Json& root, const std::string& p) {
  const Ptr ptr(p);
  if (!root.contains(ptr)) return nullptr;
  const Json& v = root.at(ptr);
  return v.is_null() ? nullptr : &v;
}

void erase(Json* root, const std::string& p) {
  const Ptr ptr(p);
  Json& parent = root->at(ptr.parent_pointer());
  parent.erase(ptr.back());
}

// The value an old key carries to its new key (nullopt-like null: drop it).
Json mapped_value(const std::string& from, const Json& v) {
  if (from == "/zero_optimization/cpu_offload" || from == "/zero_optimization/cpu_offload_param" ||
      from == "/zero_optimization/cpu_offload_params") {
    if (v.is_boolean()) return v.get<bool>() ? Json{{"device", "cpu"}} : Json();
  }
  if (from == "/pipeline/stages" && is_auto(v)) return Json();  // "auto" is already what parallel.pp means
  return v;
}

Status move_key(Json* root, const KeyAlias& a, std::vector<std::string>* notes) {
  const std::string from = a.from;
  const Json* v = find(*root, from);
  if (v == nullptr) return Status::OK();
  const bool pin = from == "/zero_optimization/cpu_offload_use_pin_memory";
  if ((pin || from.find("/cpu_offload") != std::string::npos) && !v->is_boolean()) {
    return Status::InvalidArgument(from + ": expected true or false, got " + brief(*v));
  }
  if (from == "/pipeline/stages" && !is_auto(*v) && !v->is_number_integer()) {
    return Status::InvalidArgument(from + ": expected an integer (the number of pipeline stages) or \"auto\", got " +
                                   brief(*v));
  }
  const Json value = mapped_value(from, *v);
  if (!value.is_null() && !pin && find(*root, a.to) != nullptr) {
    return Status::InvalidArgument(from + ": given together with its modern name " + a.to + "; keep one");
  }
  erase(root, from);
  notes->push_back(from + " -> " + a.to + ": " + a.note);
  if (value.is_null()) return Status::OK();
  if (!pin) {
    (*root)[Ptr(a.to)] = value;
    return Status::OK();
  }
  for (const char* block : {"/zero_optimization/offload_optimizer", "/zero_optimization/offload_param"}) {
    if (find(*root, block) != nullptr && find(*root, std::string(block) + "/pin_memory") == nullptr) {
      (*root)[Ptr(std::string(block) + "/pin_memory")] = value;
    }
  }
  return Status::OK();
}

}  // namespace

AutoContext machine_auto_context() {
  const CpuInfo c = cpu_info();
  AutoContext ctx;
  ctx.native_bf16 = (c.avx512_bf16 && c.os_avx512) || (c.amx_bf16 && c.amx_permitted);
  return ctx;
}

Status apply_aliases(Json* root, std::vector<std::string>* notes) {
  if (const Json* z = find(*root, "/zero_optimization"); z != nullptr && z->is_boolean()) {
    const bool on = z->get<bool>();
    (*root)["zero_optimization"] = Json{{"stage", on ? 1 : 0}};
    notes->push_back(std::string("/zero_optimization: ") + (on ? "true" : "false") +
                     " is DeepSpeed's deprecated form of {\"stage\": " + (on ? "1" : "0") + "}");
  }
  for (const KeyAlias& a : key_aliases()) ZT_RETURN_IF_ERROR(move_key(root, a, notes));
  std::vector<std::string> comments;  // "_comment"-style keys: DeepSpeed ignores unknown top-level keys
  for (auto it = root->begin(); it != root->end(); ++it) {
    if (!it.key().empty() && it.key()[0] == '_') comments.push_back(it.key());
  }
  for (const std::string& k : comments) {
    root->erase(k);
    notes->push_back("/" + json_pointer_escape(k) + ": a comment (a top-level key starting with \"_\"), ignored");
  }
  if (const Json* t = find(*root, "/tensor_parallel"); t != nullptr && t->is_object() && t->empty()) {
    root->erase("tensor_parallel");  // only autotp_size was there, now parallel.tp
  }
  if (const Json* c = find(*root, "/communication_data_type"); c != nullptr && c->is_string() && *c == "bfp16") {
    (*root)["communication_data_type"] = "bf16";
    notes->push_back("/communication_data_type: \"bfp16\" is DeepSpeed's old spelling of \"bf16\"");
  }
  return Status::OK();
}

namespace {

// The model's hidden size, as the model section will be read (preset or n_embd).
int64_t hidden_size(const Json& root) {
  std::string tokenizer = "gpt2";
  if (const Json* t = find(root, "/data/tokenizer"); t != nullptr && t->is_string()) tokenizer = t->get<std::string>();
  JsonReader r(root, "");
  GptConfig m;
  config_sections::parse_model(r, tokenizer, &m);
  return m.n_embd;
}

double number_at(const Json& root, const std::string& p, double dflt) {
  const Json* v = find(root, p);
  return v != nullptr && v->is_number() ? v->get<double>() : dflt;
}

// The value "auto" at pointer p becomes here; null when p has no rule.
Json auto_value(const Json& root, const std::string& p, const AutoContext& ctx) {
  if (p == "/gradient_clipping") return 1.0;
  if (p == "/optimizer/params/lr") return 1e-3;
  if (p == "/optimizer/params/betas") return Json::array({0.9, 0.999});
  if (p == "/optimizer/params/eps") return 1e-8;
  if (p == "/optimizer/params/weight_decay") return 0.0;
  if (p == "/scheduler/params/warmup_min_lr") return 0;
  if (p == "/scheduler/params/warmup_max_lr") return number_at(root, "/optimizer/params/lr", 1e-3);
  if (p == "/scheduler/params/warmup_num_steps") return 0;
  if (p == "/scheduler/params/total_num_steps") return static_cast<int64_t>(number_at(root, "/training/steps", 1000));
  if (p == "/fp16/enabled" || p == "/amp/enabled") return false;
  if (p == "/zero_optimization/stage3_gather_16bit_weights_on_model_save") return false;
  if (p == "/bf16/enabled") return ctx.native_bf16;
  const int64_t h = hidden_size(root);
  if (p == "/zero_optimization/reduce_bucket_size") return h * h;
  if (p == "/zero_optimization/stage3_prefetch_bucket_size") return static_cast<int64_t>(0.9 * static_cast<double>(h * h));
  if (p == "/zero_optimization/stage3_param_persistence_threshold") return 10 * h;
  return Json();
}

bool batch_key(const std::string& p) {
  return p == "/train_batch_size" || p == "/train_micro_batch_size_per_gpu" || p == "/gradient_accumulation_steps";
}

void collect_autos(const Json& v, const std::string& p, std::vector<std::string>* out) {
  if (is_auto(v)) out->push_back(p);
  if (v.is_object()) {
    for (auto it = v.begin(); it != v.end(); ++it) collect_autos(*it, p + "/" + json_pointer_escape(it.key()), out);
  }
}

}  // namespace

Status resolve_auto(Json* root, const AutoContext& ctx, std::vector<std::string>* notes) {
  std::vector<std::string> autos;
  collect_autos(*root, "", &autos);
  // fp16/bf16 "auto" decide together: one precision, bf16 only where it is native.
  const bool precision_auto = find(*root, "/fp16/enabled") != nullptr && is_auto(*find(*root, "/fp16/enabled"));
  if (precision_auto && find(*root, "/bf16/enabled") == nullptr && ctx.native_bf16) {
    (*root)[Ptr("/bf16/enabled")] = "auto";
    autos.push_back("/bf16/enabled");
  }
  // The optimizer's lr first: the scheduler's warmup_max_lr follows it.
  std::stable_partition(autos.begin(), autos.end(), [](const std::string& p) { return p == "/optimizer/params/lr"; });
  for (const std::string& p : autos) {
    // resolve_batch; DeepSpeed's own "auto"; training.device's "auto" is a value of its own (run_setup.h)
    if (batch_key(p) || p == "/pipeline/stages" || p == "/training/device") continue;
    const Json v = auto_value(*root, p, ctx);
    if (v.is_null()) {
      return Status::InvalidArgument(p + ": \"auto\" has no value to resolve to here (HuggingFace's integration "
                                     "fills only the keys listed in docs/config-coverage.md); give a value");
    }
    (*root)[Ptr(p)] = v;
    std::string why;
    if (p == "/bf16/enabled" || p == "/fp16/enabled") {
      why = ctx.native_bf16 ? " (this CPU computes bf16 natively)" : " (no native bf16 on this CPU: fp32)";
    }
    notes->push_back(p + ": \"auto\" -> " + v.dump() + why);
  }
  // DeepSpeed requires total_num_steps of the decaying schedules; HuggingFace fills it
  // from max_steps, zerotrain from training.steps.
  // (params that are not an object are left for the scheduler section to name.)
  const Json* type = find(*root, "/scheduler/type");
  const Json* params = find(*root, "/scheduler/params");
  if (type != nullptr && (*type == "WarmupDecayLR" || *type == "WarmupCosineLR") &&
      (params == nullptr || params->is_object()) && find(*root, "/scheduler/params/total_num_steps") == nullptr) {
    const int64_t steps = static_cast<int64_t>(number_at(*root, "/training/steps", 1000));
    (*root)[Ptr("/scheduler/params/total_num_steps")] = steps;
    notes->push_back("/scheduler/params/total_num_steps: absent -> " + std::to_string(steps) + " (training.steps)");
  }
  return Status::OK();
}

}  // namespace zt
