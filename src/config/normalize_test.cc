// Aliases, "auto" and the batch triple's resolution against HuggingFace's rules.
#include "config/normalize.h"

#include <gtest/gtest.h>

#include "config/config.h"

namespace zt {
namespace {

Json parse(const std::string& text) { return parse_json_strict(text, "test").value(); }

StatusOr<ZtConfig> config(const std::string& text, bool native_bf16 = false) {
  AutoContext ctx;
  ctx.native_bf16 = native_bf16;
  return parse_config(parse(text), ctx);
}

// One row of HuggingFace's batch rules as zerotrain applies them. Each key is given as a
// number (tbs 32, micro-batch 4, accumulation 2), "auto", or absent; expectations are
// (train_batch_size, micro_batch, grad_accum) at dp 1, 2, 4, or 0s for a refusal.
// Written by hand from the rules: numbers first (DeepSpeed's arithmetic); with neither
// train_batch_size nor the micro-batch a number, an "auto" one means HuggingFace's
// per_device_train_batch_size default 8 and the accumulation its default 1.
struct BatchRow {
  char tbs, mbs, gas;  // 'n' number, 'a' "auto", '-' absent
  int64_t want[3][3];
};

const BatchRow kRows[] = {
    {'n', 'n', 'n', {{0, 0, 0}, {0, 0, 0}, {32, 4, 2}}},
    {'n', 'n', 'a', {{32, 4, 8}, {32, 4, 4}, {32, 4, 2}}},
    {'n', 'n', '-', {{32, 4, 8}, {32, 4, 4}, {32, 4, 2}}},
    {'n', 'a', 'n', {{32, 16, 2}, {32, 8, 2}, {32, 4, 2}}},
    {'n', 'a', 'a', {{32, 32, 1}, {32, 16, 1}, {32, 8, 1}}},
    {'n', 'a', '-', {{32, 32, 1}, {32, 16, 1}, {32, 8, 1}}},
    {'n', '-', 'n', {{32, 16, 2}, {32, 8, 2}, {32, 4, 2}}},
    {'n', '-', 'a', {{32, 32, 1}, {32, 16, 1}, {32, 8, 1}}},
    {'n', '-', '-', {{32, 32, 1}, {32, 16, 1}, {32, 8, 1}}},
    {'a', 'n', 'n', {{8, 4, 2}, {16, 4, 2}, {32, 4, 2}}},
    {'a', 'n', 'a', {{4, 4, 1}, {8, 4, 1}, {16, 4, 1}}},
    {'a', 'n', '-', {{4, 4, 1}, {8, 4, 1}, {16, 4, 1}}},
    {'a', 'a', 'n', {{16, 8, 2}, {32, 8, 2}, {64, 8, 2}}},
    {'a', 'a', 'a', {{8, 8, 1}, {16, 8, 1}, {32, 8, 1}}},
    {'a', 'a', '-', {{8, 8, 1}, {16, 8, 1}, {32, 8, 1}}},
    {'a', '-', 'n', {{16, 8, 2}, {32, 8, 2}, {64, 8, 2}}},
    {'a', '-', 'a', {{8, 8, 1}, {16, 8, 1}, {32, 8, 1}}},
    {'a', '-', '-', {{8, 8, 1}, {16, 8, 1}, {32, 8, 1}}},
    {'-', 'n', 'n', {{8, 4, 2}, {16, 4, 2}, {32, 4, 2}}},
    {'-', 'n', 'a', {{4, 4, 1}, {8, 4, 1}, {16, 4, 1}}},
    {'-', 'n', '-', {{4, 4, 1}, {8, 4, 1}, {16, 4, 1}}},
    {'-', 'a', 'n', {{16, 8, 2}, {32, 8, 2}, {64, 8, 2}}},
    {'-', 'a', 'a', {{8, 8, 1}, {16, 8, 1}, {32, 8, 1}}},
    {'-', 'a', '-', {{8, 8, 1}, {16, 8, 1}, {32, 8, 1}}},
    {'-', '-', 'n', {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}}},
    {'-', '-', 'a', {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}}},
    {'-', '-', '-', {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}}},
};

TEST(BatchAuto, HuggingFaceRulesAtDp124) {
  const int dps[3] = {1, 2, 4};
  for (const BatchRow& row : kRows) {
    Json j = Json::object();
    auto put = [&](char how, const char* key, int64_t number) {
      if (how == 'n') j[key] = number;
      if (how == 'a') j[key] = "auto";
    };
    put(row.tbs, "train_batch_size", 32);
    put(row.mbs, "train_micro_batch_size_per_gpu", 4);
    put(row.gas, "gradient_accumulation_steps", 2);
    for (int i = 0; i < 3; ++i) {
      auto c = parse_config(j, AutoContext{});
      ASSERT_TRUE(c.ok()) << c.status().to_string();
      std::vector<std::string> notes;
      const Status s = resolve_batch(&c->batch, dps[i], &notes);
      const std::string what = j.dump() + " at dp " + std::to_string(dps[i]);
      if (row.want[i][0] == 0) {
        EXPECT_FALSE(s.ok()) << what;
        EXPECT_NE(s.to_string().find("train_batch_size"), std::string::npos) << s.to_string();
        continue;
      }
      ASSERT_TRUE(s.ok()) << what << ": " << s.to_string();
      EXPECT_EQ(c->batch.train_batch_size, row.want[i][0]) << what;
      EXPECT_EQ(c->batch.micro_batch, row.want[i][1]) << what;
      EXPECT_EQ(c->batch.grad_accum, row.want[i][2]) << what;
      const size_t autos = (row.tbs == 'a') + (row.mbs == 'a') + (row.gas == 'a');
      EXPECT_EQ(notes.size(), autos) << what;  // every resolved "auto" is said
    }
  }
}

TEST(Auto, ResolvesHuggingFaceKeysAndSaysSo) {
  auto c = config(R"({"gradient_clipping": "auto",
    "optimizer": {"type": "AdamW", "params": {"lr": "auto", "betas": "auto", "eps": "auto", "weight_decay": "auto"}},
    "scheduler": {"type": "WarmupDecayLR", "params": {"warmup_min_lr": "auto", "warmup_max_lr": "auto",
                  "warmup_num_steps": "auto", "total_num_steps": "auto"}},
    "zero_optimization": {"stage": 3, "reduce_bucket_size": "auto", "stage3_prefetch_bucket_size": "auto",
                          "stage3_param_persistence_threshold": "auto"},
    "model": {"n_embd": 64, "n_layer": 2, "n_head": 2}, "training": {"steps": 77}})");
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  EXPECT_EQ(c->gradient_clipping, 1.0);
  EXPECT_EQ(c->adamw.lr, 1e-3);
  EXPECT_EQ(c->adamw.beta2, 0.999);
  EXPECT_EQ(c->schedule.total_num_steps, 77);
  EXPECT_EQ(c->schedule.warmup_max_lr, 1e-3);
  EXPECT_EQ(c->schedule.warmup_num_steps, 0);
  EXPECT_EQ(c->zero.reduce.bucket_elems, 64u * 64);
  EXPECT_EQ(c->zero.fetch.prefetch_elems, static_cast<size_t>(0.9 * 64 * 64));
  EXPECT_EQ(c->zero.fetch.persistence_threshold, 640u);
  EXPECT_EQ(c->notes.size(), 12u);
  EXPECT_EQ(c->notes[0].rfind("/optimizer/params/lr: \"auto\" -> 0.001", 0), 0u) << c->notes[0];
}

TEST(Auto, PrecisionFollowsNativeBf16) {
  const std::string both = R"({"fp16": {"enabled": "auto"}, "bf16": {"enabled": "auto"}})";
  auto native = config(both, true), plain = config(both, false);
  ASSERT_TRUE(native.ok() && plain.ok());
  EXPECT_TRUE(native->precision.bf16);
  EXPECT_FALSE(native->precision.fp16);
  EXPECT_FALSE(plain->precision.bf16);
  EXPECT_FALSE(plain->precision.fp16);
  auto fp16_only = config(R"({"fp16": {"enabled": "auto", "loss_scale": 0}})", true);
  ASSERT_TRUE(fp16_only.ok()) << fp16_only.status().to_string();
  EXPECT_TRUE(fp16_only->precision.bf16);  // mixed precision where it is native, as bf16
}

TEST(Auto, ElsewhereIsAnErrorNamingThePointer) {
  auto c = config(R"({"zero_optimization": {"stage": 2, "allgather_bucket_size": "auto"}})");
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().to_string().find("/zero_optimization/allgather_bucket_size: \"auto\""), std::string::npos)
      << c.status().to_string();
}

TEST(Aliases, LegacyNamesMapWithANote) {
  auto c = config(R"({"bfloat16": {"enabled": true}, "zero_optimization": {"stage": 2, "cpu_offload": true,
    "cpu_offload_use_pin_memory": false, "stage3_gather_fp16_weights_on_model_save": true, "max_live_parameters": 5}})");
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  EXPECT_TRUE(c->precision.bf16);
  EXPECT_EQ(c->zero.offload.optimizer_device, OffloadDevice::kCpu);
  EXPECT_FALSE(c->zero.offload.pin_memory);
  EXPECT_EQ(c->resolved["zero_optimization"]["stage3_max_live_parameters"], 5);
  EXPECT_EQ(c->notes.size(), 7u);  // 5 mappings; the 16-bit gather and max_live_parameters have no effect here
  EXPECT_EQ(c->resolved["zero_optimization"]["offload_optimizer"]["device"], "cpu");
  EXPECT_FALSE(c->resolved["zero_optimization"].contains("cpu_offload"));
}

TEST(Aliases, BooleanZeroAndBothNamesGiven) {
  auto on = config(R"({"zero_optimization": true})");
  ASSERT_TRUE(on.ok());
  EXPECT_EQ(on->zero.stage, ZeroStage::kOptimizer);
  auto both = config(R"({"bf16": {"enabled": true}, "bfloat16": {"enabled": true}})");
  ASSERT_FALSE(both.ok());
  EXPECT_NE(both.status().to_string().find("/bfloat16: given together with its modern name /bf16"), std::string::npos);
  auto bad = config(R"({"zero_optimization": {"cpu_offload": "yes"}})");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().to_string().find("/zero_optimization/cpu_offload: expected true or false"), std::string::npos);
}

TEST(Refusals, NameTheKindAndTheSubstitute) {
  auto gpu = config(R"({"amp": {"enabled": true}})");
  ASSERT_FALSE(gpu.ok());
  EXPECT_NE(gpu.status().to_string().find("/amp: needs a GPU"), std::string::npos) << gpu.status().to_string();
  EXPECT_NE(gpu.status().to_string().find("use bf16 or fp16 instead"), std::string::npos);
  auto later = config(R"({"elasticity": {"enabled": true}})");
  ASSERT_FALSE(later.ok());
  EXPECT_NE(later.status().to_string().find("/elasticity: not built"), std::string::npos) << later.status().to_string();
  EXPECT_TRUE(config(R"({"prescale_gradients": true, "gradient_predivide_factor": 2.0, "compile": {"deepcompile": true},
                         "zero_optimization": {"stage": 3, "stage3_max_reuse_distance": -1, "round_robin_gradients": true},
                         "communication_data_type": "fp32", "checkpoint": {"load_universal": true}})")
                  .ok());
  auto comm = config(R"({"communication_data_type": "bfp16"})");
  ASSERT_TRUE(comm.ok()) << comm.status().to_string();
  EXPECT_EQ(comm->zero.reduce.wire, CommDType::kBF16);
}

// Found by fuzz_smoke: filling a decaying schedule's total_num_steps into params that are
// not an object threw out of the parser; the scheduler section names them instead.
TEST(Normalize, SchedulerParamsThatAreNotAnObjectAreNamed) {
  for (const char* type : {"WarmupDecayLR", "WarmupCosineLR"}) {
    auto c = config(std::string(R"({"scheduler": {"type": ")") + type + R"(", "params": 1}})");
    ASSERT_FALSE(c.ok()) << type;
    EXPECT_NE(c.status().to_string().find("/scheduler/params"), std::string::npos) << c.status().to_string();
  }
}

}  // namespace
}  // namespace zt
