// The model section's MoE keys (model_moe_keys.cc): DeepSpeed's MoE layer arguments under
// "moe" with DeepSpeed's defaults, HF's flat keys with HF's routing and objective rule, the
// MoE presets, and errors naming the JSON path and the allowed values; and what experts do
// not combine with yet, refused naming the other key.
#include <gtest/gtest.h>

#include <cstdio>

#include "config/config.h"

namespace zt {
namespace {

StatusOr<ZtConfig> parse(const std::string& text) {
  auto json = parse_json_strict(text, "config.json");
  if (!json.ok()) return json.status();
  return parse_config(json.value());
}

// The parser's error, else check_supported's (what a run refuses before starting).
std::string error_of(const std::string& text) {
  auto c = parse(text);
  if (!c.ok()) return c.status().message();
  const Status s = check_supported(c.value());
  return s.ok() ? "" : s.message();
}

TEST(ConfigMoe, DeepSpeedArgumentsTakeDeepSpeedsDefaults) {
  auto c = parse(R"({"model": {"family": "llama", "moe": {"num_experts": 8, "capacity_factor": 1.25}}})");
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  const MoeConfig& m = c->model.moe;
  EXPECT_EQ(m.num_experts, 8);
  EXPECT_EQ(m.k(), 1);
  EXPECT_EQ(m.gate.routing, MoeRouting::kDeepSpeed);
  EXPECT_EQ(m.gate.capacity_factor, 1.25);
  EXPECT_EQ(m.eval_capacity_factor, 1.25);
  EXPECT_EQ(m.gate.min_capacity, 4);
  EXPECT_TRUE(m.gate.drop_tokens && m.gate.use_rts && m.gate.second_sampling && !m.gate.rsample);
  EXPECT_EQ(m.aux_loss_coef, 0.0);
}

// ep_size is DeepSpeed's MoE layer argument, but a layout: it lands in the parallel section.
TEST(ConfigMoe, EpSizeIsTheExpertParallelLayout) {
  auto c = parse(R"({"model": {"family": "llama", "moe": {"num_experts": 8, "ep_size": 4}}, "parallel": {"dp": 4}})");
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  EXPECT_EQ(c->parallel.ep, 4);
  EXPECT_EQ(error_of(R"({"model": {"family": "llama", "moe": {"num_experts": 8, "ep_size": 3}}})"),
            "/parallel/ep (model.moe.ep_size): 3 must divide num_experts=8");
  auto preset = parse(R"({"model": {"preset": "Mixtral-8x7B"}, "parallel": {"dp": 8, "ep": 8}})");  // HF's keys: no ep_size
  ASSERT_TRUE(preset.ok()) << preset.status().to_string();
  EXPECT_EQ(preset->parallel.ep, 8);
  EXPECT_NE(error_of(R"({"model": {"family": "llama", "moe": {"num_experts": 8, "ep_size": 2}}, "parallel": {"ep": 4}})")
                .find("contradicts /parallel/ep (4)"),
            std::string::npos);
  EXPECT_EQ(error_of(R"({"parallel": {"ep": 2}})"), "/parallel/ep: 2 (expert parallelism) needs a model with experts (model.moe)");
}

TEST(ConfigMoe, HuggingFaceKeysRouteAsHf) {
  auto c = parse(R"({"model": {"family": "llama", "num_local_experts": 4, "num_experts_per_tok": 2,
                               "router_aux_loss_coef": 0.02, "output_router_logits": true}})");
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  EXPECT_EQ(c->model.moe.gate.routing, MoeRouting::kMixtral);
  EXPECT_EQ(c->model.moe.aux_loss_coef, 0.02);
  EXPECT_FALSE(c->model.moe.gate.drop_tokens);
  auto quiet = parse(R"({"model": {"family": "qwen2", "num_experts": 4, "decoder_sparse_step": 2}})");
  ASSERT_TRUE(quiet.ok()) << quiet.status().to_string();
  EXPECT_EQ(quiet->model.moe.aux_loss_coef, 0.0) << "HF adds the balance loss only with output_router_logits";
  EXPECT_FALSE(quiet->model.moe.gate.renormalize) << "Qwen2-MoE's norm_topk_prob defaults to false";
  EXPECT_EQ(quiet->model.moe.k(), 4);
  EXPECT_TRUE(quiet->model.moe_block(1) && !quiet->model.moe_block(0));
}

TEST(ConfigMoe, PresetsCountActiveParameters) {
  auto c = parse(R"({"model": {"preset": "Mixtral-8x7B"}, "data": {"seq_len": 256}})");
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  // mistralai/Mixtral-8x7B-v0.1: 46.7 B parameters, 12.9 B active per token.
  EXPECT_NEAR(c->model.num_parameters() / 1e9, 46.70, 0.01);
  EXPECT_NEAR(c->model.active_parameters() / 1e9, 12.88, 0.01);
  auto qwen = parse(R"({"model": {"preset": "Qwen1.5-MoE-A2.7B"}, "data": {"seq_len": 256}})");
  ASSERT_TRUE(qwen.ok()) << qwen.status().to_string();
  std::printf("  Qwen1.5-MoE-A2.7B: %.3f B parameters, %.3f B active\n", qwen->model.num_parameters() / 1e9,
              qwen->model.active_parameters() / 1e9);
  EXPECT_NEAR(qwen->model.num_parameters() / 1e9, 14.32, 0.01);  // the model card: 14.3 B, 2.7 B activated
  EXPECT_NEAR(qwen->model.active_parameters() / 1e9, 2.69, 0.01);
  auto tiny = parse(R"({"model": {"preset": "tiny-mixtral", "num_experts_per_tok": 1}, "data": {"tokenizer": "byte"}})");
  ASSERT_TRUE(tiny.ok()) << tiny.status().to_string();
  EXPECT_EQ(tiny->model.moe.k(), 1);
  EXPECT_EQ(tiny->model.vocab_size, 257);
}

TEST(ConfigMoe, ErrorsNameThePathAndTheAllowedValues) {
  EXPECT_EQ(error_of(R"({"model": {"moe": {"num_experts": 4, "noisy_gate_policy": "Gauss"}}})"),
            R"(/model/moe/noisy_gate_policy: expected one of "None", "Jitter", "RSample", got "Gauss")");
  EXPECT_EQ(error_of(R"({"model": {"moe": {"num_experts": 4, "num_experts_per_tok": 5}}})"),
            "/model/moe: num_experts_per_tok: expected 1..4, got 5");
  EXPECT_EQ(error_of(R"({"model": {"moe": {"capacity_factor": 2}}})"),
            "/model/moe/num_experts: is missing: the experts of each MoE block");
  EXPECT_EQ(error_of(R"({"model": {"num_experts": 4, "moe": {"num_experts": 4}}})"),
            "/model/moe: given together with HuggingFace's flat MoE keys; use one form");
  EXPECT_EQ(error_of(R"({"model": {"moe": {"num_experts": 4, "use_residual": true, "shared_expert_intermediate_size": 8}}})"),
            "/model/moe: use_residual: a PR-MoE residual MLP and a shared expert (shared_expert_intermediate_size) do "
            "not combine; choose one");
  EXPECT_EQ(error_of(R"({"model": {"moe": {"num_experts": 4}}, "bf16": {"enabled": true}})"), "");  // an fp32 island
}

}  // namespace
}  // namespace zt
