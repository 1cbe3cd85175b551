// parse_config orchestration, DeepSpeed batch arithmetic, feature gate, overrides.
#include "config/config.h"

#include <algorithm>
#include <tuple>

#include "config/key_tables.h"
#include "config/sections.h"
#include "io/atomic_file.h"

namespace zt {

using namespace config_sections;

StatusOr<ZtConfig> parse_config(const Json& root) { return parse_config(root, machine_auto_context()); }

StatusOr<ZtConfig> parse_config(const Json& given, const AutoContext& ctx) {
  if (!given.is_object()) return Status::InvalidArgument("config: expected a JSON object at the top level");
  ZtConfig c;
  c.source = given;
  c.resolved = given;
  ZT_RETURN_IF_ERROR(apply_aliases(&c.resolved, &c.notes));
  ZT_RETURN_IF_ERROR(extract_tuning_space(&c.resolved, &c.autotuning, &c.notes));
  ZT_RETURN_IF_ERROR(resolve_auto(&c.resolved, ctx, &c.notes));
  const Json& root = c.resolved;
  JsonReader r(root, "");
  parse_batch(r, &c.batch);
  parse_optimizer(r, &c);
  parse_scheduler(r, &c);
  parse_zero(r, &c.zero);
  parse_precision(r, &c.precision);
  parse_aio(r, &c.zero.offload.aio);
  parse_monitors(r, &c.tensorboard, &c.csv_monitor);
  parse_profilers(r, &c.comms_logger, &c.flops_profiler);
  parse_activation_checkpointing(r, &c.activation_checkpointing);
  parse_parallel(r, &c.parallel);  // before parse_misc: DeepSpeed's pipeline section may refine it
  parse_misc(r, &c);
  parse_data(r, &c.data);
  parse_model(r, c.data.tokenizer, &c.model, &c.parallel.ep);
  parse_training(r, &c.training);
  parse_parameter_server(r, &c.parameter_server);
  parse_efficiency(r, &c.efficiency, &c.notes);
  parse_autotuning(r, &c.autotuning);
  ZT_RETURN_IF_ERROR(r.finish());
  for (const InertKey& k : inert_keys()) {  // accepted, never silently
    const Json::json_pointer ptr(k.pointer);
    if (root.contains(ptr) && !root.at(ptr).is_null()) c.notes.push_back(std::string(k.pointer) + ": no effect here: " + k.why);
  }
  PsOptions& ps = c.parameter_server.options;  // its unset sizes follow the data-parallel ones
  if (ps.bucket_elems == 0) ps.bucket_elems = c.zero.reduce.bucket_elems;
  if (ps.deadline_s == 0.0) ps.deadline_s = c.parallel.comm_timeout_s;
  if (c.zero.offload.sub_group_size == 0) {
    c.notes.push_back("/zero_optimization/sub_group_size: 0 -> one sub-group per parameter tensor, as DeepSpeed reads "
                      "it: offloaded optimizer state streams in chunks of the largest tensor");
  }
  if (c.efficiency.eigenvalue.enabled && (c.parallel.pp > 1 || c.parallel.tp > 1 || c.parallel.ep > 1)) {
    return Status::InvalidArgument("/eigenvalue/enabled: the estimate needs the whole model on every rank; pipeline, "
                                   "tensor and expert parallelism hold a part (use data parallelism and ZeRO)");
  }
  if (c.data.seq_len > c.model.n_positions) {
    return Status::InvalidArgument("/data/seq_len: " + std::to_string(c.data.seq_len) +
                                   " exceeds /model/n_positions=" + std::to_string(c.model.n_positions));
  }
  return c;
}

StatusOr<ZtConfig> parse_config_text(const std::string& text, const std::string& label) {
  ZT_ASSIGN_OR_RETURN(const Json json, parse_json_strict(text, label));
  return parse_config(json);
}

static Status resolve_batch_numbers(BatchConfig* b, int dp);

Status resolve_batch(BatchConfig* b, int dp, std::vector<std::string>* notes) {
  const BatchConfig given = *b;
  if (b->train_batch_size == 0 && b->micro_batch == 0 && (b->train_batch_size_auto || b->micro_batch_auto)) {
    b->micro_batch = 8;  // HuggingFace's per_device_train_batch_size default
  }
  ZT_RETURN_IF_ERROR(resolve_batch_numbers(b, dp));
  if (notes != nullptr) {
    auto note = [&](bool automatic, const char* key, int64_t v) {
      if (automatic) notes->push_back(std::string("/") + key + ": \"auto\" -> " + std::to_string(v));
    };
    note(given.train_batch_size_auto, "train_batch_size", b->train_batch_size);
    note(given.micro_batch_auto, "train_micro_batch_size_per_gpu", b->micro_batch);
    note(given.grad_accum_auto, "gradient_accumulation_steps", b->grad_accum);
  }
  return Status::OK();
}

// DeepSpeed's arithmetic on the keys given as numbers (0 = not given).
static Status resolve_batch_numbers(BatchConfig* b, int dp) {
  const int64_t tbs = b->train_batch_size, mbs = b->micro_batch, gas = b->grad_accum;
  const std::string dp_text = "data-parallel size " + std::to_string(dp);
  auto bad = [](const std::string& key, const std::string& why) { return Status::InvalidArgument("/" + key + ": " + why); };
  // x * y * z, false when it overflows int64 (each config value may be up to 2^63 - 1).
  auto product = [](int64_t x, int64_t y, int64_t z, int64_t* out) {
    return !__builtin_mul_overflow(x, y, out) && !__builtin_mul_overflow(*out, z, out);
  };
  int64_t p = 0;
  if (tbs == 0 && mbs == 0) {
    return bad("train_batch_size", "either train_batch_size or train_micro_batch_size_per_gpu must be given");
  }
  if (tbs && mbs && gas) {
    const bool fits = product(mbs, gas, dp, &p);
    if (!fits || tbs != p) {
      return bad("train_batch_size", std::to_string(tbs) + " is not train_micro_batch_size_per_gpu " +
                                         std::to_string(mbs) + " x gradient_accumulation_steps " + std::to_string(gas) +
                                         " x " + dp_text + " (= " + (fits ? std::to_string(p) : "more than 2^63") + ")");
    }
  } else if (tbs && mbs) {
    if (!product(mbs, dp, 1, &p) || tbs % p != 0) {
      return bad("train_batch_size", std::to_string(tbs) + " is not divisible by train_micro_batch_size_per_gpu " +
                                         std::to_string(mbs) + " x " + dp_text);
    }
    b->grad_accum = tbs / p;
  } else if (tbs && gas) {
    if (!product(gas, dp, 1, &p) || tbs % p != 0) {
      return bad("train_batch_size", std::to_string(tbs) + " is not divisible by gradient_accumulation_steps " +
                                         std::to_string(gas) + " x " + dp_text);
    }
    b->micro_batch = tbs / p;
  } else if (mbs) {
    b->grad_accum = gas ? gas : 1;
    if (!product(mbs, b->grad_accum, dp, &p)) {
      return bad("train_micro_batch_size_per_gpu", std::to_string(mbs) + " x gradient_accumulation_steps " +
                                                       std::to_string(b->grad_accum) + " x " + dp_text +
                                                       " overflows a 64-bit train_batch_size");
    }
    b->train_batch_size = p;
  } else {  // train_batch_size alone
    if (tbs % dp != 0) {
      return bad("train_batch_size", std::to_string(tbs) + " is not divisible by the " + dp_text);
    }
    b->grad_accum = 1;
    b->micro_batch = tbs / dp;
  }
  return Status::OK();
}

void add_run_notes(ZtConfig* c) {
  if (c->zero.fetch.hpz_partition_size > 1 && c->zero.stage != ZeroStage::kParameters) {
    c->notes.push_back("/zero_optimization/zero_hpz_partition_size: no effect at stage " +
                       std::to_string(static_cast<int>(c->zero.stage)) + ", as in DeepSpeed: hpZ partitions ZeRO-3's "
                       "parameters a second time");
    c->zero.fetch.hpz_partition_size = 1;
  }
  if (c->zero.fetch.quantized_weights && c->zero.stage != ZeroStage::kParameters) {
    c->notes.push_back("/zero_optimization/zero_quantized_weights: no effect at stage " +
                       std::to_string(static_cast<int>(c->zero.stage)) + ", as in DeepSpeed: qwZ quantizes ZeRO-3's "
                       "parameter all-gathers");
  }
  if (c->zero.reduce.quantized_gradients && c->zero.stage != ZeroStage::kParameters) {
    c->notes.push_back("/zero_optimization/zero_quantized_gradients: no effect at stage " +
                       std::to_string(static_cast<int>(c->zero.stage)) + ", as in DeepSpeed: qgZ quantizes ZeRO-3's "
                       "gradient reduce-scatter");
    c->zero.reduce.quantized_gradients = false;
  }
  if (c->zero.offload.param_device != OffloadDevice::kNone && c->zero.stage != ZeroStage::kParameters) {
    c->notes.push_back("/zero_optimization/offload_param: ignored at stage " + std::to_string(static_cast<int>(c->zero.stage)) +
                       ", as DeepSpeed ignores it: parameters are offloaded under ZeRO-3 only");
    c->zero.offload.param_device = OffloadDevice::kNone;
  }
  const ActivationCheckpointConfig& ac = c->activation_checkpointing;
  if (ac.cpu_checkpointing && ac.number_checkpoints <= 0 && ac.interval <= 0) {
    c->notes.push_back("/activation_checkpointing/cpu_checkpointing: no effect: no block is checkpointed (set "
                       "activation_checkpointing.number_checkpoints or the pipeline's activation_checkpoint_interval)");
  }
}

Status resolve_config_batch(ZtConfig* c) {
  // Sequence-parallel ranks share their sequences: dp / sp ranks read different ones.
  ZT_RETURN_IF_ERROR(resolve_batch(&c->batch, c->parallel.dp / std::max(1, c->parallel.sp), &c->notes));
  c->resolved["train_batch_size"] = c->batch.train_batch_size;
  c->resolved["train_micro_batch_size_per_gpu"] = c->batch.micro_batch;
  c->resolved["gradient_accumulation_steps"] = c->batch.grad_accum;
  return Status::OK();
}

Status resolve_parallel(ParallelConfig* p, int world) {
  const int64_t model_parallel = static_cast<int64_t>(p->pp) * p->tp;  // each up to 2^20: int64
  if (p->dp == 0) {
    if (world % model_parallel != 0) {
      return Status::InvalidArgument("/parallel: " + std::to_string(world) + " ranks are not divisible by pp x tp = " +
                                     std::to_string(model_parallel));
    }
    p->dp = static_cast<int>(world / model_parallel);
  }
  const int64_t total = p->dp * model_parallel;
  if (total != world) {
    return Status::InvalidArgument("/parallel/dp: dp " + std::to_string(p->dp) + " x pp " + std::to_string(p->pp) +
                                   " x tp " + std::to_string(p->tp) + " = " + std::to_string(total) +
                                   " does not match the " + std::to_string(world) + " ranks launched");
  }
  if (p->dp % p->sp != 0) {
    return Status::InvalidArgument("/sequence_parallel_size: " + std::to_string(p->sp) + " must divide the data-parallel size " +
                                   std::to_string(p->dp) + " (sequence-parallel groups are made of data-parallel ranks)");
  }
  return Status::OK();
}

std::vector<bool> checkpointed_blocks(const ActivationCheckpointConfig& a, int n_layer) {
  std::vector<bool> out;
  if (a.interval > 0) {
    out.assign(static_cast<size_t>(n_layer), false);
    for (int l = 0; l < n_layer; l += static_cast<int>(a.interval)) out[static_cast<size_t>(l)] = true;
  } else if (a.number_checkpoints > 0) {
    out.assign(static_cast<size_t>(n_layer), false);
    const int64_t k = std::min<int64_t>(a.number_checkpoints, n_layer);
    for (int64_t i = 0; i < k; ++i) out[static_cast<size_t>(i * n_layer / k)] = true;  // spread evenly
  }
  return out;
}

// The offload blocks' combinations (paths are checked when the swap files are made).
static Status check_offload(const ZtConfig& c) {
  const std::string zo = "/zero_optimization/";
  const OffloadOptions& f = c.zero.offload;
  const bool opt_nvme = f.optimizer_device == OffloadDevice::kNvme, par_nvme = f.param_device == OffloadDevice::kNvme;
  if (par_nvme && c.zero.stage == ZeroStage::kParameters && !opt_nvme) {
    return Status::Unimplemented(zo + "offload_param/device: \"nvme\" needs offload_optimizer.device \"nvme\" too: "
                                 "zerotrain swaps the parameter shard in the optimizer's chunks");
  }
  for (const auto& [key, nvme, path] : {std::tuple{"offload_optimizer", opt_nvme, &f.optimizer_path},
                                        std::tuple{"offload_param", par_nvme, &f.param_path}}) {
    if (nvme && path->empty()) {
      return Status::InvalidArgument(zo + key + "/nvme_path: device \"nvme\" needs a path (an existing directory)");
    }
  }
  if ((opt_nvme || par_nvme) && c.parameter_server.enabled) {
    return Status::Unimplemented(zo + "offload_optimizer/device: \"nvme\" with the parameter server is not supported: "
                                 "the servers hold the optimizer state");
  }
  return Status::OK();
}

// What experts (model.moe) do not combine with yet, named by the other key.
static Status check_moe(const ZtConfig& c) {
  if (!c.model.moe.enabled() && c.parallel.ep > 1) {
    return Status::InvalidArgument("/parallel/ep: " + std::to_string(c.parallel.ep) +
                                   " (expert parallelism) needs a model with experts (model.moe)");
  }
  if (!c.model.moe.enabled()) return Status::OK();
  const std::string why = " with experts (model.moe) is not supported yet: ";
  if (c.parameter_server.enabled) {
    return Status::Unimplemented("/parameter_server/enabled: true" + why + "the workers do not weigh the balance loss");
  }
  if (c.parallel.ep > 1 && c.model.moe.num_experts % c.parallel.ep != 0) {
    return Status::InvalidArgument("/parallel/ep (model.moe.ep_size): " + std::to_string(c.parallel.ep) + " must divide num_experts=" +
                                   std::to_string(c.model.moe.num_experts));
  }
  return Status::OK();
}

// What 16-bit gradient reduction (communication_data_type) does not combine with yet.
static Status check_comm_dtype(const ZtConfig& c) {
  if (c.zero.reduce.wire == CommDType::kF32) return Status::OK();
  const std::string ptr = std::string("/communication_data_type: \"") +
                          (c.zero.reduce.wire == CommDType::kBF16 ? "bf16" : "fp16") + "\" with ";
  if (c.parallel.ep > 1) {
    return Status::Unimplemented(ptr + "expert parallelism is not supported yet: the experts' gradients reduce over "
                                 "their own group in fp32 (use \"fp32\")");
  }
  if (c.parameter_server.enabled) {
    return Status::Unimplemented(ptr + "the parameter server is not supported: its workers push fp32 gradients to "
                                 "the servers (use \"fp32\")");
  }
  const OptimizerKind k = c.optimizer;
  if (k == OptimizerKind::kOneBitAdam || k == OptimizerKind::kZeroOneAdam || k == OptimizerKind::kOneBitLamb) {
    return Status::Unimplemented(ptr + "a 1-bit optimizer is not supported: it compresses its own communication "
                                 "(use \"fp32\")");
  }
  return Status::OK();
}

// What ZeRO++ qgZ (zero_quantized_gradients, stage 3) does not combine with.
static Status check_quantized_gradients(const ZtConfig& c) {
  if (!c.zero.reduce.quantized_gradients || c.zero.stage != ZeroStage::kParameters) return Status::OK();
  const std::string ptr = "/zero_optimization/zero_quantized_gradients: true with ";
  if (c.zero.reduce.wire != CommDType::kF32) {
    return Status::Unimplemented(ptr + "communication_data_type \"" + (c.zero.reduce.wire == CommDType::kBF16 ? "bf16" : "fp16") +
                                 "\" is not supported: qgZ sends int4 groups and exact fp32 vectors, not 16-bit "
                                 "values (choose one of the two)");
  }
  if (c.parallel.ep > 1) {
    return Status::Unimplemented(ptr + "expert parallelism is not supported: the experts' gradients reduce over their "
                                 "own group");
  }
  return Status::OK();
}

Status check_supported(const ZtConfig& c) {
  auto no = [](const std::string& ptr, const std::string& why) { return Status::Unimplemented(ptr + ": " + why); };
  if (c.precision.fp16 && c.precision.bf16) {
    return Status::InvalidArgument("/fp16/enabled and /bf16/enabled are both true: choose one precision");
  }
  if (c.precision.fp16 || c.precision.bf16) {
    const std::string ptr = c.precision.fp16 ? "/fp16/enabled" : "/bf16/enabled";
    if (c.parameter_server.enabled && c.precision.fp16) {
      return no(ptr, "true with the parameter server is not supported yet: skipping a step on an overflow needs "
                     "every server to agree; use bf16");
    }
  }
  if (c.parallel.pp > 1 && shards_gradients(c.zero.stage)) {
    return no("/zero_optimization/stage", std::to_string(static_cast<int>(c.zero.stage)) + " with parallel.pp > 1: ZeRO-2/3 would "
              "re-partition gradients and parameters for every micro-batch of the pipeline schedule (DeepSpeed "
              "refuses it too); use stage 0 or 1");
  }
  // "cpu" is where a CPU run's states already live (accepted, said once in the banner);
  // "nvme" is the real tier (parallel/zero/model_states.h).
  ZT_RETURN_IF_ERROR(check_offload(c));
  if (c.flops_profiler.enabled && c.parallel.pp > 1) {
    return no("/flops_profiler/enabled", "true with pipeline parallelism is not supported yet: the profile times the "
                                         "layers of one rank's whole model");
  }
  const ActivationCheckpointConfig& ac = c.activation_checkpointing;
  if (ac.cpu_checkpointing && ac.partition_activations && c.parallel.tp > 1) {
    return no("/activation_checkpointing/cpu_checkpointing",
              "true together with partition_activations at tp > 1 is not supported: choose one (each keeps the "
              "checkpointed inputs out of the activation arena)");
  }
  ZT_RETURN_IF_ERROR(check_comm_dtype(c));
  ZT_RETURN_IF_ERROR(check_quantized_gradients(c));
  return check_moe(c);
}

StatusOr<Json> load_json_file(const std::string& path) {
  auto text = read_file(path, 64u << 20);  // a config is kilobytes; refuse anything absurd before reading it
  if (!text.ok()) {
    if (text.status().code() == StatusCode::kNotFound) return Status::NotFound("config file not found: " + path);
    return text.status();
  }
  return parse_json_strict(text.value(), path);
}

Status apply_override(Json* root, const std::string& assignment) {
  const size_t eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0) {
    return Status::InvalidArgument("--set " + assignment + ": expected key.path=value");
  }
  const std::string key = assignment.substr(0, eq), text = assignment.substr(eq + 1);
  Json value;
  auto parsed = parse_json_strict(text, "--set " + key);
  value = parsed.ok() ? parsed.value() : Json(text);
  Json* node = root;
  size_t start = 0;
  while (true) {
    const size_t dot = key.find('.', start);
    const std::string part = key.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (part.empty()) return Status::InvalidArgument("--set " + assignment + ": empty key component");
    if (!node->is_object()) {
      return Status::InvalidArgument("--set " + assignment + ": " + key.substr(0, start - 1) + " is not an object");
    }
    if (dot == std::string::npos) {
      (*node)[part] = value;
      return Status::OK();
    }
    if (!node->contains(part)) (*node)[part] = Json::object();
    node = &(*node)[part];
    start = dot + 1;
  }
}

}  // namespace zt
