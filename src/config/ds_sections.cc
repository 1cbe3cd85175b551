// DeepSpeed sections of ds_config.json, with DeepSpeed's defaults (deepspeed/runtime/
// constants.py, zero/config.py, lr_schedules.py, activation_checkpointing/config.py).
#include <algorithm>
#include <cmath>
#include <limits>

#include "config/key_tables.h"
#include "config/sections.h"

namespace zt::config_sections {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr int64_t kMaxInt = INT64_MAX;

// A section for a feature zerotrain lacks: accepted only when absent or {"enabled": false}
// (its other keys then configure nothing); refused otherwise, naming the key.
void refuse_unless_disabled(JsonReader& root, const RefusedKey& k) {
  const std::string key = std::string(k.pointer).substr(1);
  const Json* v = root.raw(key);
  if (v == nullptr) return;
  if (v->is_object() && v->contains("enabled") && (*v)["enabled"].is_boolean() && !(*v)["enabled"].get<bool>()) return;
  root.fail(key, refusal_text(k));
}

// The old names apply_aliases moved away are still DeepSpeed's vocabulary: an unknown-key
// message lists them among the allowed keys of `prefix` (a section pointer plus "/").
void accept_aliases(JsonReader& r, const std::string& prefix) {
  for (const KeyAlias& a : key_aliases()) {
    const std::string from = a.from;
    if (from.rfind(prefix, 0) == 0 && from.find('/', prefix.size()) == std::string::npos) {
      r.accept(from.substr(prefix.size()));
    }
  }
}

}  // namespace

void refuse(JsonReader& r, const std::string& key) {
  const RefusedKey* k = find_refused_value(r.path(key));
  r.fail(key, k != nullptr ? refusal_text(*k) : "is not supported");
}

void parse_batch(JsonReader& root, BatchConfig* b) {
  auto read = [&](const char* key, int64_t* value, bool* automatic) {
    const Json* v = root.raw(key);
    *automatic = v != nullptr && is_auto(*v);
    if (!*automatic) *value = root.integer(key, 0, 1, kMaxInt);
  };
  read("train_batch_size", &b->train_batch_size, &b->train_batch_size_auto);
  read("train_micro_batch_size_per_gpu", &b->micro_batch, &b->micro_batch_auto);
  read("gradient_accumulation_steps", &b->grad_accum, &b->grad_accum_auto);
}

static OffloadDevice offload_device(JsonReader& r) {
  const std::string d = r.choice("device", "none", {"none", "cpu", "nvme"});
  return d == "nvme" ? OffloadDevice::kNvme : d == "cpu" ? OffloadDevice::kCpu : OffloadDevice::kNone;
}

// offload_optimizer: into the model states' OffloadOptions (defaults there).
static void parse_offload_optimizer(JsonReader& zero, OffloadOptions* o) {
  auto r = zero.object("offload_optimizer");
  if (!r) return;
  o->optimizer_device = offload_device(*r);
  o->optimizer_path = r->string("nvme_path", "");
  r->integer("buffer_count", 4, 1, kMaxInt);  // DeepSpeed's swap buffers; zerotrain's swapper sizes its own
  o->pin_memory = r->boolean("pin_memory", o->pin_memory);
  // zerotrain's swapper always reads ahead and writes behind (DeepSpeed's pipelined
  // swapper); fast_init changes only how DeepSpeed builds its first swap files.
  r->boolean("pipeline_read", false);
  r->boolean("pipeline_write", false);
  r->boolean("fast_init", false);
  if (r->number("ratio", 1.0, 0.0, 1.0) != 1.0) refuse(*r, "ratio");
  r->boolean("super_offload", false);
  r->number("cpuadam_cores_perc", 0.8, 0.0, 1.0);
  r->done();
}

// offload_param: the same OffloadOptions' parameter part.
static void parse_offload_param(JsonReader& zero, OffloadOptions* o) {
  auto r = zero.object("offload_param");
  if (!r) return;
  o->param_device = offload_device(*r);
  o->param_path = r->string("nvme_path", "");
  o->param_buffer_count = static_cast<int>(r->integer("buffer_count", o->param_buffer_count, 1, kMaxInt));
  r->boolean("pin_memory", true);  // the optimizer block's pin_memory sizes the one staging area
  o->param_buffer_size = static_cast<size_t>(r->integer("buffer_size", o->param_buffer_size, 1, kMaxInt));
  o->max_in_cpu = static_cast<size_t>(r->integer("max_in_cpu", o->max_in_cpu, 0, kMaxInt));
  r->done();
}

// The keys the modules read go straight into their options (parallel/data/zero_options.h),
// whose values before the call are the defaults.
static void parse_zero_modules(JsonReader& r, ZeroOptions* z) {
  z->reduce.overlap = r.boolean("overlap_comm", z->stage == ZeroStage::kParameters);  // DeepSpeed's rule
  // DeepSpeed allows 0: every layer is then a bucket of its own.
  auto elems = [&](const char* key, size_t dflt) {
    return static_cast<size_t>(std::max<int64_t>(1, r.integer(key, static_cast<int64_t>(dflt), 0, kMaxInt)));
  };
  z->reduce.bucket_elems = elems("reduce_bucket_size", z->reduce.bucket_elems);
  z->allgather_bucket_elems = elems("allgather_bucket_size", z->allgather_bucket_elems);
  // The unprefixed spellings were moved here by apply_aliases (normalize.h).
  ParamFetcherOptions& f = z->fetch;
  f.prefetch_elems = static_cast<size_t>(r.integer("stage3_prefetch_bucket_size", static_cast<int64_t>(f.prefetch_elems), 0, kMaxInt));
  f.persistence_threshold = static_cast<size_t>(
      r.integer("stage3_param_persistence_threshold", static_cast<int64_t>(f.persistence_threshold), 0, kMaxInt));
  // 0: DeepSpeed makes every parameter tensor a sub-group of its own (cli/run_setup.cc).
  z->offload.sub_group_size =
      static_cast<size_t>(r.integer("sub_group_size", static_cast<int64_t>(z->offload.sub_group_size), 0, kMaxInt));
  parse_offload_optimizer(r, &z->offload);
  parse_offload_param(r, &z->offload);
  // DeepSpeed reads offload_param under ZeRO-3 only: add_run_notes says so and drops it below.
}

void parse_zero(JsonReader& root, ZeroOptions* z) {
  auto r = root.object("zero_optimization");
  if (!r) {
    z->reduce.overlap = false;  // DeepSpeed's overlap_comm at its default stage 0
    return;
  }
  z->stage = static_cast<ZeroStage>(r->integer("stage", 0, 0, 3));
  accept_aliases(*r, "/zero_optimization/");
  parse_zero_modules(*r, z);
  r->integer("stage3_max_live_parameters", 1'000'000'000, 0, kMaxInt);
  // -1: never keep a gathered parameter for reuse (DeepSpeed's older configs write it).
  r->integer("stage3_max_reuse_distance", 1'000'000'000, -1, kMaxInt);
  r->integer("stage3_model_persistence_threshold", kMaxInt, 0, kMaxInt);
  r->integer("stage3_module_granularity_threshold", 0, 0, kMaxInt);
  // Implementation knobs with no effect on results in zerotrain's flat-buffer design
  // (gradients are always contiguous, parameters always fetched by all-gather).
  for (const char* k : {"contiguous_gradients", "reduce_scatter", "allgather_partitions",
                        "use_multi_rank_bucket_allreduce", "load_from_fp32_weights", "ignore_unused_parameters",
                        "memory_efficient_linear", "stage3_use_all_reduce_for_fetch_params",
                        "stage3_allgather_sequential", "log_trace_cache_warnings",
                        "stage3_gather_16bit_weights_on_model_save", "round_robin_gradients"}) {
    r->boolean(k, true);
  }
  // Variants zerotrain does not implement: only their off values are accepted.
  // ZeRO++ qwZ (parallel/zero/quantized_gather.h); stage 3 only, as in DeepSpeed (add_run_notes).
  z->fetch.quantized_weights = r->boolean("zero_quantized_weights", false);
  // ZeRO++ qgZ (parallel/zero/quantized_reduce.h); stage 3 only, as in DeepSpeed (add_run_notes).
  z->reduce.quantized_gradients = r->boolean("zero_quantized_gradients", false);
  for (const char* k : {"zero_quantized_nontrainable_weights",
                        "elastic_checkpoint", "mics_hierarchical_params_gather"}) {
    if (r->boolean(k, false)) refuse(*r, k);
  }
  // ZeRO++ hpZ (parallel/zero/param_fetcher.h); stage 3 only, as in DeepSpeed (add_run_notes).
  z->fetch.hpz_partition_size = static_cast<int>(r->integer("zero_hpz_partition_size", 1, 1, 1 << 20));
  if (r->integer("mics_shard_size", -1, -1, kMaxInt) != -1) refuse(*r, "mics_shard_size");
  r->done();
}

void parse_monitors(JsonReader& root, MonitorConfig* tensorboard, MonitorConfig* csv) {
  for (auto [key, m] : {std::pair{"tensorboard", tensorboard}, std::pair{"csv_monitor", csv}}) {
    auto r = root.object(key);
    if (!r) continue;
    m->enabled = r->boolean("enabled", false);
    m->output_path = r->string("output_path", "");
    m->job_name = r->string("job_name", "DeepSpeedJobName");
    r->done();
  }
}

void parse_profilers(JsonReader& root, CommsLoggerConfig* comms, FlopsProfilerConfig* flops) {
  if (auto r = root.object("comms_logger")) {
    comms->enabled = r->boolean("enabled", false);
    comms->verbose = r->boolean("verbose", false);
    comms->prof_all = r->boolean("prof_all", true);
    comms->debug = r->boolean("debug", false);
    if (r->has("prof_ops")) {
      comms->prof_ops = r->strings("prof_ops");
      for (const std::string& op : comms->prof_ops) {
        static const char* known[] = {"all_reduce", "reduce_scatter", "all_gather", "broadcast", "send", "recv",
                                      "barrier"};
        if (std::find_if(std::begin(known), std::end(known), [&](const char* k) { return op == k; }) == std::end(known)) {
          r->fail("prof_ops", "\"" + op + "\" is not a collective zerotrain runs; allowed: all_reduce, reduce_scatter, "
                              "all_gather, broadcast, send, recv, barrier");
        }
      }
    }
    r->done();
  }
  if (auto r = root.object("flops_profiler")) {
    flops->enabled = r->boolean("enabled", false);
    flops->profile_step = r->integer("profile_step", 1, 1, kMaxInt);
    flops->module_depth = r->integer("module_depth", -1, -1, kMaxInt);
    flops->top_modules = r->integer("top_modules", 1, 1, kMaxInt);
    flops->detailed = r->boolean("detailed", true);
    flops->output_file = r->string("output_file", "");
    r->done();
  }
}

void parse_aio(JsonReader& root, AioConfig* a) {
  if (auto aio = root.object("aio")) {  // NVMe I/O tuning; only used with NVMe offload
    a->block_size = static_cast<size_t>(aio->integer("block_size", static_cast<int64_t>(a->block_size), 1, kMaxInt));
    a->queue_depth = static_cast<int>(aio->integer("queue_depth", a->queue_depth, 1, 4096));
    // thread_count is the documented name, intra_op_parallelism the one DeepSpeed's code reads.
    const int64_t intra = aio->integer("intra_op_parallelism", a->thread_count, 1, 64);
    a->thread_count = static_cast<int>(aio->integer("thread_count", intra, 1, 64));
    a->single_submit = aio->boolean("single_submit", a->single_submit);
    a->overlap_events = aio->boolean("overlap_events", a->overlap_events);
    if (aio->boolean("use_gds", false)) refuse(*aio, "use_gds");
    if (a->block_size % kIoAlign != 0) {
      aio->fail("block_size", "must be a multiple of " + std::to_string(kIoAlign) + " bytes (O_DIRECT alignment), got " +
                                  std::to_string(a->block_size));
    }
    aio->done();
  }
}

// fp16's loss-scale keys copied into a bf16 block: DeepSpeed's bf16 reads none of them.
void read_bf16_loss_scale_keys(JsonReader& b) {
  for (const char* k : {"loss_scale", "initial_scale_power", "loss_scale_window", "hysteresis", "min_loss_scale"}) {
    b.number(k, 0.0, 0.0, kInf);
  }
  b.boolean("consecutive_hysteresis", false);
}

void parse_precision(JsonReader& root, PrecisionConfig* p) {
  if (auto f = root.object("fp16")) {
    p->fp16 = f->boolean("enabled", false);
    f->boolean("auto_cast", false);
    LossScalerOptions& s = p->loss_scaler;  // its defaults are the scaler's own
    s.loss_scale = f->number("loss_scale", s.loss_scale, 0.0, kInf);
    s.initial_scale_power = static_cast<int>(f->integer("initial_scale_power", s.initial_scale_power, 0, 64));
    s.loss_scale_window = f->integer("loss_scale_window", s.loss_scale_window, 1, kMaxInt);
    s.hysteresis = static_cast<int>(f->integer("hysteresis", s.hysteresis, 1, kMaxInt));
    s.consecutive_hysteresis = f->boolean("consecutive_hysteresis", s.consecutive_hysteresis);
    s.min_loss_scale = f->number("min_loss_scale", s.min_loss_scale, 0.0, kInf);
    f->boolean("fp16_master_weights_and_grads", false);
    f->choice("opt_level", "O2", {"O0", "O1", "O2", "O3"});  // inert (key_tables.h)
    f->done();
  }
  for (const char* key : {"bf16"}) {  // the legacy "bfloat16" was renamed by apply_aliases
    if (auto b = root.object(key)) {
      p->bf16 = b->boolean("enabled", false) || p->bf16;
      b->boolean("immediate_grad_update", true);
      b->boolean("check_overflow", false);
      read_bf16_loss_scale_keys(*b);  // inert (key_tables.h)
      for (const char* k : {"bf16_master_weights_and_grads", "bf16_optimizer_states"}) {
        if (b->boolean(k, false)) refuse(*b, k);
      }
      b->done();
    }
  }
  if (auto d = root.object("data_types")) {  // DeepSpeed's grad_accum_dtype (default: fp32 here; see config.h)
    if (d->has("grad_accum_dtype") &&
        d->choice("grad_accum_dtype", "fp32", {"fp32", "fp16", "bf16"}) != "fp32") {
      refuse(*d, "grad_accum_dtype");
    }
    d->done();
  }
}

void parse_activation_checkpointing(JsonReader& root, ActivationCheckpointConfig* a) {
  auto r = root.object("activation_checkpointing");
  if (!r) return;
  a->partition_activations = r->boolean("partition_activations", false);
  a->cpu_checkpointing = r->boolean("cpu_checkpointing", false);
  a->number_checkpoints = r->integer("number_checkpoints", 0, 0, kMaxInt);
  r->boolean("contiguous_memory_optimization", false);
  r->boolean("synchronize_checkpoint_boundary", false);
  r->boolean("profile", false);
  r->done();
}

// "partition": a method name, or DeepSpeed's object form {"type": <method>}.
std::string pipeline_partition(JsonReader& pipe, std::vector<std::string>* notes) {
  static const std::initializer_list<const char*> kMethods = {"parameters", "uniform", "best"};
  if (const Json* raw = pipe.raw("partition"); raw != nullptr && raw->is_object()) {
    JsonReader obj = pipe.nested(*raw, pipe.path("partition"));
    const std::string type = obj.choice("type", "parameters", kMethods);
    obj.done();
    notes->push_back("/pipeline/partition: {\"type\": \"" + type + "\"} read as \"" + type + "\"");
    return type;
  }
  return pipe.choice("partition", "parameters", kMethods);
}

void parse_misc(JsonReader& root, ZtConfig* c) {
  c->gradient_clipping = root.number("gradient_clipping", 1.0, 0.0, kInf);
  accept_aliases(root, "/");
  c->steps_per_print = root.integer("steps_per_print", 0, 1, kMaxInt);
  c->wall_clock_breakdown = root.boolean("wall_clock_breakdown", false);
  root.boolean("memory_breakdown", false);  // zerotrain always reports memory
  root.boolean("zero_allow_untested_optimizer", false);
  root.boolean("zero_force_ds_cpu_optimizer", true);
  root.boolean("dataloader_drop_last", false);  // zerotrain's sampler always uses whole batches
  root.boolean("disable_allgather", false);
  root.boolean("prescale_gradients", false);          // inert: key_tables.h says why
  root.number("gradient_predivide_factor", 1.0, 0.0, kInf);
  root.choice("seq_parallel_communication_data_type", "fp32", {"fp32", "fp16", "bf16"});  // inert (key_tables.h)
  for (const char* k : {"comms_config", "monitor_config"}) root.raw(k);                    // inert (key_tables.h)
  for (const char* k : {"sparse_gradients", "dump_state"}) {
    if (root.boolean(k, false)) refuse(root, k);
  }
  root.choice("gradient_allreduce_op", "mean", {"mean"});
  // The data-parallel gradient reduction's format (parallel/data/grad_wire.h); zerotrain's
  // default is fp32 whatever the model's precision (DeepSpeed's follows it).
  const std::string comm = root.choice("communication_data_type", "fp32", {"fp32", "fp16", "bf16"});
  c->zero.reduce.wire = comm == "bf16" ? CommDType::kBF16 : comm == "fp16" ? CommDType::kF16 : CommDType::kF32;
  if (root.raw("compile") != nullptr && !root.raw("compile")->is_object()) {
    root.fail("compile", "expected an object, got " + json_brief(*root.raw("compile")));
  }  // any compile block is inert (key_tables.h)
  if (auto ck = root.object("checkpoint")) {
    ck->choice("tag_validation", "Warn", {"Ignore", "Warn", "Fail"}, true);
    ck->boolean("load_universal", false);  // inert: zerotrain checkpoints reshard on load
    ck->boolean("use_node_local_storage", false);
    ck->done();
  }
  for (const RefusedKey& k : refused_sections()) refuse_unless_disabled(root, k);
  if (auto pipe = root.object("pipeline")) {  // DeepSpeed's pipeline section; degrees live in "parallel"
    c->activation_checkpointing.interval = pipe->integer("activation_checkpoint_interval", 0, 0, 1 << 20);
    const std::string partition = pipeline_partition(*pipe, &c->notes);
    c->parallel.partition_method = partition == "uniform" ? "uniform" : "parameters";
    for (const char* k : {"pipe_partitioned", "grad_partitioned"}) pipe->boolean(k, true);
    pipe->boolean("seed_layers", false);
    if (pipe->has("virtual_stages")) {  // Megatron's virtual pipeline size, beside the section's other keys
      const int v = static_cast<int>(pipe->integer("virtual_stages", 1, 1, 1 << 10));
      if (c->parallel.virtual_stages != 1 && c->parallel.virtual_stages != v) {
        pipe->fail("virtual_stages", "contradicts /parallel/virtual_stages (" + std::to_string(c->parallel.virtual_stages) + ")");
      }
      c->parallel.virtual_stages = v;
    }
    pipe->done();
  }
  if (auto tp = root.object("tensor_parallel")) tp->done();  // autotp_size became parallel.tp; other keys are unknown
}

}  // namespace zt::config_sections
