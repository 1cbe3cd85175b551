// DeepSpeed sections of ds_config.json, with DeepSpeed's defaults (deepspeed/runtime/
// constants.py, zero/config.py, lr_schedules.py, activation_checkpointing/config.py).
#include <algorithm>
#include <cmath>
#include <limits>

#include "config/sections.h"

namespace zt::config_sections {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr int64_t kMaxInt = INT64_MAX;

// A section for a feature zerotrain lacks: accepted only when absent or {"enabled": false}
// (its other keys then configure nothing); refused otherwise, naming the key.
void refuse_unless_disabled(JsonReader& root, const char* key, const char* why) {
  const Json* v = root.raw(key);
  if (v == nullptr) return;
  if (v->is_object() && v->contains("enabled") && (*v)["enabled"].is_boolean() && !(*v)["enabled"].get<bool>()) return;
  root.fail(key, why);
}

}  // namespace

void parse_batch(JsonReader& root, BatchConfig* b) {
  b->train_batch_size = root.integer("train_batch_size", 0, 1, kMaxInt);
  b->micro_batch = root.integer("train_micro_batch_size_per_gpu", 0, 1, kMaxInt);
  b->grad_accum = root.integer("gradient_accumulation_steps", 0, 1, kMaxInt);
}

void parse_optimizer(JsonReader& root, ZtConfig* c) {
  auto opt = root.object("optimizer");
  if (!opt) return;  // no section: AdamW with DeepSpeed FusedAdam's defaults
  const std::string type = opt->choice("type", "AdamW",
                                       {"Adam", "AdamW", "SGD", "Lamb", "OneBitAdam", "ZeroOneAdam", "OneBitLamb",
                                        "Adagrad", "Lion", "Muon", "MuAdam", "MuAdamW", "MuSGD", "AdamW8bit", "RMSprop"},
                                       /*case_insensitive=*/true);
  auto params = opt->object("params");
  if (type == "Adam" || type == "AdamW") {
    c->optimizer = OptimizerKind::kAdamW;
    AdamWOptions& a = c->adamw;
    a.weight_decay = 0.0;  // DeepSpeed's FusedAdam default (torch's AdamW would use 0.01)
    if (params) {
      a.lr = params->number("lr", 1e-3, 0.0, kInf);
      if (const Json* betas = params->raw("betas")) {
        if (!betas->is_array() || betas->size() != 2 || !(*betas)[0].is_number() || !(*betas)[1].is_number() ||
            (*betas)[0].get<double>() < 0 || (*betas)[0].get<double>() >= 1 || (*betas)[1].get<double>() < 0 ||
            (*betas)[1].get<double>() >= 1) {
          params->fail("betas", "expected two numbers in [0, 1), got " + json_brief(*betas));
        } else {
          a.beta1 = (*betas)[0].get<double>();
          a.beta2 = (*betas)[1].get<double>();
        }
      }
      a.eps = params->number("eps", 1e-8, 0.0, 1.0);
      a.weight_decay = params->number("weight_decay", 0.0, 0.0, kInf);
      a.bias_correction = params->boolean("bias_correction", true);
      // DeepSpeed's "Adam" is AdamW (decoupled decay) unless adam_w_mode is false.
      if (!params->boolean("adam_w_mode", true)) {
        params->fail("adam_w_mode", "false (Adam with L2-coupled weight decay) is not supported; use AdamW");
      }
      if (params->boolean("amsgrad", false)) params->fail("amsgrad", "true is not supported");
      params->boolean("torch_adam", false);  // implementation choice; zerotrain always uses its own kernel
      params->boolean("fused", false);
    }
  } else if (type == "SGD") {
    c->optimizer = OptimizerKind::kSgd;
    SgdOptions& s = c->sgd;
    if (params) {
      s.lr = params->number("lr", 1e-3, 0.0, kInf);
      s.momentum = params->number("momentum", 0.0, 0.0, kInf);
      s.dampening = params->number("dampening", 0.0, 0.0, 1.0);
      s.weight_decay = params->number("weight_decay", 0.0, 0.0, kInf);
      s.nesterov = params->boolean("nesterov", false);
      if (s.nesterov && (s.momentum <= 0.0 || s.dampening != 0.0)) {
        params->fail("nesterov", "true requires momentum > 0 and dampening 0 (as torch.optim.SGD)");
      }
    }
  } else {
    opt->fail("type", "\"" + type + "\" is not supported yet; supported: \"Adam\", \"AdamW\", \"SGD\"");
  }
  if (params) params->done();  // status is shared; unknown keys surface from finish()
  opt->done();
  c->schedule.base_lr = c->optimizer == OptimizerKind::kAdamW ? c->adamw.lr : c->sgd.lr;
}

void parse_scheduler(JsonReader& root, ZtConfig* c) {
  LrScheduleOptions& s = c->schedule;
  auto sched = root.object("scheduler");
  if (!sched) return;
  const std::string type = sched->choice("type", "WarmupLR",
                                         {"WarmupLR", "WarmupDecayLR", "WarmupCosineLR", "OneCycle", "LRRangeTest"});
  if (type == "LRRangeTest") {
    sched->fail("type", "\"LRRangeTest\" is not supported yet; supported: \"WarmupLR\", \"WarmupDecayLR\", "
                        "\"WarmupCosineLR\", \"OneCycle\"");
    return;
  }
  JsonReader p = sched->object_or_empty("params");
  p.integer("last_batch_iteration", -1, -1, -1);  // resuming sets it; a config may only say -1
  auto warmup_type = [&] {
    return p.choice("warmup_type", "log", {"log", "linear"}) == "log" ? WarmupType::kLog : WarmupType::kLinear;
  };
  if (type == "WarmupLR" || type == "WarmupDecayLR") {
    s.kind = type == "WarmupLR" ? ScheduleKind::kWarmupLR : ScheduleKind::kWarmupDecayLR;
    s.warmup_min_lr = p.number("warmup_min_lr", 0.0, 0.0, kInf);
    s.warmup_max_lr = p.number("warmup_max_lr", NAN, 0.0, kInf);
    s.warmup_num_steps = p.integer("warmup_num_steps", 1000, 1, kMaxInt);
    s.warmup_type = warmup_type();
    if (s.kind == ScheduleKind::kWarmupDecayLR) {
      if (!p.has("total_num_steps")) p.fail("total_num_steps", "required for WarmupDecayLR");
      s.total_num_steps = p.integer("total_num_steps", 0, 1, kMaxInt);
    }
  } else if (type == "WarmupCosineLR") {
    s.kind = ScheduleKind::kWarmupCosineLR;
    if (!p.has("total_num_steps")) p.fail("total_num_steps", "required for WarmupCosineLR");
    s.total_num_steps = p.integer("total_num_steps", 0, 1, kMaxInt);
    s.warmup_min_ratio = p.number("warmup_min_ratio", 0.0, 0.0, 1.0);
    s.warmup_num_steps = p.integer("warmup_num_steps", 1000, 1, kMaxInt);
    s.cos_min_ratio = p.number("cos_min_ratio", 0.0001, 0.0, 1.0);
    s.warmup_type = warmup_type();
  } else {  // OneCycle
    s.kind = ScheduleKind::kOneCycle;
    if (!p.has("cycle_min_lr")) p.fail("cycle_min_lr", "required for OneCycle");
    if (!p.has("cycle_max_lr")) p.fail("cycle_max_lr", "required for OneCycle");
    s.cycle_min_lr = p.number("cycle_min_lr", 0.0, 0.0, kInf);
    s.cycle_max_lr = p.number("cycle_max_lr", 0.0, 0.0, kInf);
    s.decay_lr_rate = p.number("decay_lr_rate", 0.0, 0.0, kInf);
    s.cycle_first_step_size = p.integer("cycle_first_step_size", 2000, 1, kMaxInt);
    s.cycle_second_step_size = p.integer("cycle_second_step_size", -1, 1, kMaxInt);
    s.cycle_first_stair_count = p.integer("cycle_first_stair_count", 0, 0, kMaxInt);
    s.cycle_second_stair_count = p.integer("cycle_second_stair_count", -1, 0, kMaxInt);
    s.decay_step_size = p.integer("decay_step_size", 0, 0, kMaxInt);
    s.cycle_momentum = p.boolean("cycle_momentum", true);
    s.cycle_min_mom = p.number("cycle_min_mom", 0.8, 0.0, 1.0);
    s.cycle_max_mom = p.number("cycle_max_mom", 0.9, 0.0, 1.0);
    s.decay_mom_rate = p.number("decay_mom_rate", 0.0, 0.0, kInf);
  }
  p.done();
  sched->done();
}

static void parse_offload(JsonReader& zero, const char* key, OffloadConfig* o, bool param) {
  auto r = zero.object(key);
  if (!r) return;
  o->device = r->choice("device", "none", {"none", "cpu", "nvme"});
  o->nvme_path = r->string("nvme_path", "");
  o->buffer_count = r->integer("buffer_count", param ? 5 : 4, 1, kMaxInt);
  o->pin_memory = r->boolean("pin_memory", true);
  if (param) {
    o->buffer_size = r->integer("buffer_size", 100'000'000, 1, kMaxInt);
    o->max_in_cpu = r->integer("max_in_cpu", 1'000'000'000, 0, kMaxInt);
  } else {
    // zerotrain's swapper always reads ahead and writes behind (DeepSpeed's pipelined
    // swapper); fast_init changes only how DeepSpeed builds its first swap files.
    r->boolean("pipeline_read", false);
    r->boolean("pipeline_write", false);
    r->boolean("fast_init", false);
    if (r->number("ratio", 1.0, 0.0, 1.0) != 1.0) {
      r->fail("ratio", "values below 1 (ZeRO-Offload++ \"Twin-Flow\": part of the step on the accelerator) need an "
                       "accelerator; a CPU run updates every parameter on the CPU");
    }
    r->boolean("super_offload", false);
    r->number("cpuadam_cores_perc", 0.8, 0.0, 1.0);
  }
  r->done();
}

void parse_zero(JsonReader& root, ZeroConfig* z) {
  auto r = root.object("zero_optimization");
  if (!r) return;
  z->stage = static_cast<int>(r->integer("stage", 0, 0, 3));
  z->overlap_comm = r->boolean("overlap_comm", z->stage == 3);
  z->contiguous_gradients = r->boolean("contiguous_gradients", true);
  z->reduce_scatter = r->boolean("reduce_scatter", true);
  z->reduce_bucket_size = r->integer("reduce_bucket_size", 500'000'000, 1, kMaxInt);
  z->allgather_bucket_size = r->integer("allgather_bucket_size", 500'000'000, 1, kMaxInt);
  const int64_t prefetch = r->integer("prefetch_bucket_size", 50'000'000, 0, kMaxInt);  // alias
  z->stage3_prefetch_bucket_size = r->integer("stage3_prefetch_bucket_size", prefetch, 0, kMaxInt);
  const int64_t persist = r->integer("param_persistence_threshold", 100'000, 0, kMaxInt);  // alias
  z->stage3_param_persistence_threshold = r->integer("stage3_param_persistence_threshold", persist, 0, kMaxInt);
  const int64_t live = r->integer("max_live_parameters", 1'000'000'000, 0, kMaxInt);  // alias
  z->stage3_max_live_parameters = r->integer("stage3_max_live_parameters", live, 0, kMaxInt);
  const int64_t reuse = r->integer("max_reuse_distance", 1'000'000'000, 0, kMaxInt);  // alias
  z->stage3_max_reuse_distance = r->integer("stage3_max_reuse_distance", reuse, 0, kMaxInt);
  z->sub_group_size = r->integer("sub_group_size", 1'000'000'000, 1, kMaxInt);
  r->integer("stage3_model_persistence_threshold", kMaxInt, 0, kMaxInt);
  r->integer("model_persistence_threshold", kMaxInt, 0, kMaxInt);
  r->integer("stage3_module_granularity_threshold", 0, 0, kMaxInt);
  // Implementation knobs with no effect on results in zerotrain's flat-buffer design
  // (gradients are always contiguous, parameters always fetched by all-gather).
  for (const char* k : {"allgather_partitions", "use_multi_rank_bucket_allreduce", "load_from_fp32_weights",
                        "ignore_unused_parameters", "memory_efficient_linear", "stage3_use_all_reduce_for_fetch_params",
                        "stage3_allgather_sequential", "log_trace_cache_warnings",
                        "stage3_gather_16bit_weights_on_model_save", "stage3_gather_fp16_weights_on_model_save"}) {
    r->boolean(k, true);
  }
  // Variants zerotrain does not implement: only their off values are accepted.
  for (const char* k : {"round_robin_gradients", "zero_quantized_weights", "zero_quantized_gradients",
                        "zero_quantized_nontrainable_weights", "elastic_checkpoint", "mics_hierarchical_params_gather",
                        "cpu_offload", "cpu_offload_param"}) {
    if (r->boolean(k, false)) r->fail(k, "true is not supported");
  }
  r->boolean("cpu_offload_use_pin_memory", false);
  if (r->integer("zero_hpz_partition_size", 1, 1, kMaxInt) != 1) {
    r->fail("zero_hpz_partition_size", "values other than 1 (ZeRO++ hpZ) are not supported");
  }
  if (r->integer("mics_shard_size", -1, -1, kMaxInt) != -1) r->fail("mics_shard_size", "MiCS is not supported");
  parse_offload(*r, "offload_optimizer", &z->offload_optimizer, false);
  parse_offload(*r, "offload_param", &z->offload_param, true);
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
    a->block_size = static_cast<size_t>(aio->integer("block_size", 1048576, 1, kMaxInt));
    a->queue_depth = static_cast<int>(aio->integer("queue_depth", 8, 1, 4096));
    // thread_count is the documented name, intra_op_parallelism the one DeepSpeed's code reads.
    const int64_t intra = aio->integer("intra_op_parallelism", 1, 1, 64);
    a->thread_count = static_cast<int>(aio->integer("thread_count", intra, 1, 64));
    a->single_submit = aio->boolean("single_submit", false);
    a->overlap_events = aio->boolean("overlap_events", true);
    if (aio->boolean("use_gds", false)) aio->fail("use_gds", "GPUDirect Storage needs a GPU");
    if (a->block_size % kIoAlign != 0) {
      aio->fail("block_size", "must be a multiple of " + std::to_string(kIoAlign) + " bytes (O_DIRECT alignment), got " +
                                  std::to_string(a->block_size));
    }
    aio->done();
  }
}

void parse_precision(JsonReader& root, PrecisionConfig* p) {
  if (auto f = root.object("fp16")) {
    p->fp16 = f->boolean("enabled", false);
    f->boolean("auto_cast", false);
    p->fp16_loss_scale = f->number("loss_scale", 0.0, 0.0, kInf);
    p->fp16_initial_scale_power = static_cast<int>(f->integer("initial_scale_power", 16, 0, 64));
    p->fp16_loss_scale_window = f->integer("loss_scale_window", 1000, 1, kMaxInt);
    p->fp16_hysteresis = static_cast<int>(f->integer("hysteresis", 2, 1, kMaxInt));
    p->fp16_consecutive_hysteresis = f->boolean("consecutive_hysteresis", false);
    p->fp16_min_loss_scale = f->number("min_loss_scale", 1.0, 0.0, kInf);
    f->boolean("fp16_master_weights_and_grads", false);
    f->done();
  }
  for (const char* key : {"bf16", "bfloat16"}) {  // "bfloat16" is DeepSpeed's legacy spelling
    if (auto b = root.object(key)) {
      p->bf16 = b->boolean("enabled", false) || p->bf16;
      b->boolean("immediate_grad_update", true);
      b->boolean("check_overflow", false);
      if (b->boolean("bf16_master_weights_and_grads", false)) {
        b->fail("bf16_master_weights_and_grads", "true is not supported: zerotrain keeps fp32 master weights and "
                                                 "gradients (DeepSpeed's default)");
      }
      if (b->boolean("bf16_optimizer_states", false)) {
        b->fail("bf16_optimizer_states", "true is not supported: optimizer states are fp32");
      }
      b->done();
    }
  }
  if (auto d = root.object("data_types")) {  // DeepSpeed's grad_accum_dtype (default: fp32 here; see config.h)
    if (d->has("grad_accum_dtype") &&
        d->choice("grad_accum_dtype", "fp32", {"fp32", "fp16", "bf16"}) != "fp32") {
      d->fail("grad_accum_dtype", "only \"fp32\" is supported: gradients accumulate in fp32");
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

void parse_misc(JsonReader& root, ZtConfig* c) {
  c->gradient_clipping = root.number("gradient_clipping", 1.0, 0.0, kInf);
  c->steps_per_print = root.integer("steps_per_print", 0, 1, kMaxInt);
  c->wall_clock_breakdown = root.boolean("wall_clock_breakdown", false);
  root.boolean("memory_breakdown", false);  // zerotrain always reports memory
  root.boolean("zero_allow_untested_optimizer", false);
  root.boolean("zero_force_ds_cpu_optimizer", true);
  root.boolean("dataloader_drop_last", false);  // zerotrain's sampler always uses whole batches
  root.boolean("disable_allgather", false);
  for (const char* k : {"prescale_gradients", "sparse_gradients", "dump_state"}) {
    if (root.boolean(k, false)) root.fail(k, "true is not supported");
  }
  if (root.number("gradient_predivide_factor", 1.0, 0.0, kInf) != 1.0) {
    root.fail("gradient_predivide_factor", "values other than 1.0 are not supported");
  }
  root.choice("gradient_allreduce_op", "mean", {"mean"});
  if (root.has("communication_data_type") && root.choice("communication_data_type", "fp32", {"fp32", "fp16", "bf16"}) != "fp32") {
    root.fail("communication_data_type", "only \"fp32\" is supported: gradients accumulate and are reduced in fp32");
  }
  if (auto ck = root.object("checkpoint")) {
    ck->choice("tag_validation", "Warn", {"Ignore", "Warn", "Fail"}, true);
    if (ck->boolean("load_universal", false)) {
      ck->fail("load_universal", "is not needed: zerotrain checkpoints reshard on load");
    }
    ck->boolean("use_node_local_storage", false);
    ck->done();
  }
  refuse_unless_disabled(root, "wandb", "Weights & Biases needs its network service, which a training run here does "
                                        "not reach; use tensorboard or csv_monitor (both written locally)");
  refuse_unless_disabled(root, "comet", "Comet needs its network service, which a training run here does not reach; "
                                        "use tensorboard or csv_monitor (both written locally)");
  refuse_unless_disabled(root, "elasticity", "elastic training is not supported");
  refuse_unless_disabled(root, "autotuning", "autotuning is not supported");
  refuse_unless_disabled(root, "amp", "NVIDIA Apex AMP is not supported");
  refuse_unless_disabled(root, "compression_training", "compression training is not supported");
  refuse_unless_disabled(root, "data_efficiency", "data efficiency (curriculum/random-LTD) is not supported");
  refuse_unless_disabled(root, "curriculum_learning", "curriculum learning is not supported");
  refuse_unless_disabled(root, "sparse_attention", "sparse attention is not supported");
  refuse_unless_disabled(root, "torch_autocast", "torch autocast is not supported; see bf16/fp16");
  if (auto pipe = root.object("pipeline")) {  // DeepSpeed's pipeline section; degrees live in "parallel"
    c->activation_checkpointing.interval = pipe->integer("activation_checkpoint_interval", 0, 0, 1 << 20);
    const std::string partition = pipe->choice("partition", "parameters", {"parameters", "uniform", "best"});
    c->parallel.partition_method = partition == "uniform" ? "uniform" : "parameters";
    if (pipe->has("stages") && !(pipe->raw("stages")->is_string() && pipe->raw("stages")->get<std::string>() == "auto")) {
      pipe->fail("stages", "set the number of stages with zerotrain's parallel.pp");
    }
    for (const char* k : {"pipe_partitioned", "grad_partitioned"}) pipe->boolean(k, true);
    pipe->boolean("seed_layers", false);
    pipe->done();
  }
  refuse_unless_disabled(root, "tensor_parallel", "tensor parallelism is not supported yet");
  refuse_unless_disabled(root, "sequence_parallel", "sequence parallelism is not supported");
}

}  // namespace zt::config_sections
