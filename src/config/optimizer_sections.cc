// DeepSpeed's "optimizer" and "scheduler" sections, with DeepSpeed's defaults
// (ops/adam/fused_adam.py, ops/lamb/fused_lamb.py, runtime/fp16/onebit/{adam,zoadam,
// lamb}.py, runtime/lr_schedules.py).
#include <cmath>
#include <limits>

#include "config/key_tables.h"
#include "config/sections.h"

namespace zt::config_sections {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr int64_t kMaxInt = INT64_MAX;

// The keys every Adam-like DeepSpeed optimizer reads: lr, betas, eps, weight_decay,
// bias_correction, and the implementation switches that change nothing here.
void read_adam_like(JsonReader& p, LambOptions* a) {
  a->lr = p.number("lr", 1e-3, 0.0, kInf);
  if (const Json* betas = p.raw("betas")) {
    if (!betas->is_array() || betas->size() != 2 || !(*betas)[0].is_number() || !(*betas)[1].is_number() ||
        (*betas)[0].get<double>() < 0 || (*betas)[0].get<double>() >= 1 || (*betas)[1].get<double>() < 0 ||
        (*betas)[1].get<double>() >= 1) {
      p.fail("betas", "expected two numbers in [0, 1), got " + json_brief(*betas));
    } else {
      a->beta1 = (*betas)[0].get<double>();
      a->beta2 = (*betas)[1].get<double>();
    }
  }
  a->eps = p.number("eps", 1e-8, 0.0, 1.0);
  a->weight_decay = p.number("weight_decay", 0.0, 0.0, kInf);
  a->bias_correction = p.boolean("bias_correction", true);
  a->eps_inside_sqrt = p.boolean("eps_inside_sqrt", false);
  if (p.boolean("amsgrad", false)) refuse(p, "amsgrad");
  p.number("max_grad_norm", 0.0, 0.0, kInf);  // DeepSpeed forces it to 0 in fp32; gradient_clipping clips
  p.boolean("torch_adam", false);
  p.boolean("fused", false);
  p.string("comm_backend_name", "nccl");  // MPI is the backend (key_tables.h)
  p.boolean("cuda_aware", false);
}

void read_lamb_coefficients(JsonReader& p, LambOptions* a) {
  a->max_coeff = p.number("max_coeff", 10.0, 0.0, kInf);
  a->min_coeff = p.number("min_coeff", 0.01, 0.0, kInf);
  if (a->min_coeff > a->max_coeff) p.fail("min_coeff", "must not exceed max_coeff");
}

void read_onebit(JsonReader& p, const std::string& type, OneBitOptions* o) {
  read_adam_like(p, &o->base);
  if (type == "ZeroOneAdam") {
    o->var_freeze_step = p.integer("var_freeze_step", 100000, 1, kMaxInt);
    o->var_update_scaler = p.integer("var_update_scaler", 16, 1, kMaxInt);
    o->local_step_scaler = p.integer("local_step_scaler", 32678, 1, kMaxInt);
    o->local_step_clipper = p.integer("local_step_clipper", 16, 1, kMaxInt);
    return;
  }
  o->freeze_step = p.integer("freeze_step", 100000, 1, kMaxInt);
  if (type == "OneBitLamb") {
    read_lamb_coefficients(p, &o->base);
    o->coeff_beta = p.number("coeff_beta", 0.9, 0.0, 1.0);
    o->factor_max = p.number("factor_max", 4.0, 1.0, kInf);
    o->factor_min = p.number("factor_min", 0.5, 0.0, 1.0);
    o->factor_threshold = p.number("factor_threshold", 0.1, 0.0, kInf);
  }
}

}  // namespace

void parse_optimizer(JsonReader& root, ZtConfig* c) {
  auto opt = root.object("optimizer");
  if (!opt) return;  // no section: AdamW with DeepSpeed FusedAdam's defaults
  const std::string type = opt->choice("type", "AdamW",
                                       {"Adam", "AdamW", "SGD", "Lamb", "OneBitAdam", "ZeroOneAdam", "OneBitLamb",
                                        "Adagrad", "Lion", "Muon", "MuAdam", "MuAdamW", "MuSGD", "AdamW8bit", "RMSprop"},
                                       /*case_insensitive=*/true);
  JsonReader params = opt->object_or_empty("params");
  if (type == "Adam" || type == "AdamW") {
    c->optimizer = OptimizerKind::kAdamW;
    LambOptions a;
    read_adam_like(params, &a);
    if (!params.boolean("adam_w_mode", true)) refuse(params, "adam_w_mode");  // DeepSpeed's "Adam" is AdamW
    c->adamw = AdamWOptions{a.lr, a.beta1, a.beta2, a.eps, a.weight_decay, a.bias_correction};
    if (a.eps_inside_sqrt) params.fail("eps_inside_sqrt", "true is not supported for Adam (FusedAdam has no such mode)");
    c->schedule.base_lr = a.lr;
  } else if (type == "SGD") {
    c->optimizer = OptimizerKind::kSgd;
    SgdOptions& s = c->sgd;
    s.lr = params.number("lr", 1e-3, 0.0, kInf);
    s.momentum = params.number("momentum", 0.0, 0.0, kInf);
    s.dampening = params.number("dampening", 0.0, 0.0, 1.0);
    s.weight_decay = params.number("weight_decay", 0.0, 0.0, kInf);
    s.nesterov = params.boolean("nesterov", false);
    if (s.nesterov && (s.momentum <= 0.0 || s.dampening != 0.0)) {
      params.fail("nesterov", "true requires momentum > 0 and dampening 0 (as torch.optim.SGD)");
    }
    c->schedule.base_lr = s.lr;
  } else if (type == "Lamb") {
    c->optimizer = OptimizerKind::kLamb;
    read_adam_like(params, &c->lamb);
    read_lamb_coefficients(params, &c->lamb);
    c->schedule.base_lr = c->lamb.lr;
  } else if (type == "OneBitAdam" || type == "ZeroOneAdam" || type == "OneBitLamb") {
    c->optimizer = type == "OneBitAdam"    ? OptimizerKind::kOneBitAdam
                   : type == "ZeroOneAdam" ? OptimizerKind::kZeroOneAdam
                                           : OptimizerKind::kOneBitLamb;
    read_onebit(params, type, &c->onebit);
    c->schedule.base_lr = c->onebit.base.lr;
  } else {
    opt->fail("type", "\"" + type + "\": " + refusal_text(*find_refused_value("/optimizer/type")));
  }
  params.done();  // status is shared; unknown keys surface from finish()
  opt->done();
}

void parse_scheduler(JsonReader& root, ZtConfig* c) {
  LrScheduleOptions& s = c->schedule;
  auto sched = root.object("scheduler");
  if (!sched) return;
  const std::string type = sched->choice("type", "WarmupLR",
                                         {"WarmupLR", "WarmupDecayLR", "WarmupCosineLR", "OneCycle", "LRRangeTest"});
  if (type == "LRRangeTest") {
    sched->fail("type", "\"LRRangeTest\": " + refusal_text(*find_refused_value("/scheduler/type")));
    return;
  }
  JsonReader p = sched->object_or_empty("params");
  p.integer("last_batch_iteration", -1, -1, -1);  // resuming sets it; a config may only say -1
  auto warmup_type = [&] {
    return p.choice("warmup_type", "log", {"log", "linear"}) == "log" ? WarmupType::kLog : WarmupType::kLinear;
  };
  // total_num_steps, when absent, is filled from training.steps by resolve_auto (normalize.h).
  if (type == "WarmupLR" || type == "WarmupDecayLR") {
    s.kind = type == "WarmupLR" ? ScheduleKind::kWarmupLR : ScheduleKind::kWarmupDecayLR;
    s.warmup_min_lr = p.number("warmup_min_lr", 0.0, 0.0, kInf);
    s.warmup_max_lr = p.number("warmup_max_lr", NAN, 0.0, kInf);
    s.warmup_num_steps = p.integer("warmup_num_steps", 1000, 0, kMaxInt);
    s.warmup_type = warmup_type();
    if (s.kind == ScheduleKind::kWarmupDecayLR) s.total_num_steps = p.integer("total_num_steps", 0, 1, kMaxInt);
  } else if (type == "WarmupCosineLR") {
    s.kind = ScheduleKind::kWarmupCosineLR;
    s.total_num_steps = p.integer("total_num_steps", 0, 1, kMaxInt);
    s.warmup_min_ratio = p.number("warmup_min_ratio", 0.0, 0.0, 1.0);
    s.warmup_num_steps = p.integer("warmup_num_steps", 1000, 0, kMaxInt);
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

}  // namespace zt::config_sections
