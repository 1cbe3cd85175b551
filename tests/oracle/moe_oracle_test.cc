// PyTorch oracle for the mixture-of-experts knob (issue 30, acceptance 1):
// tests/oracle/mixtral_reference.py builds a tiny Mixtral-style model in plain PyTorch (the
// Llama body, sparse MoE blocks of SwiGLU experts, HF modeling_mixtral conventions) from
// the tensors zerotrain initialised, runs the same tokens and returns logits, loss, the
// balance loss, every gradient, and 10 AdamW steps of cross-entropy plus coefficient times
// the balance loss (testing/model_oracle.h: 1e-4 on logits, the balance loss and
// gradients, 1e-5 on each loss). Cases:
// - Mixtral routing (softmax top-2, renormalised, nothing dropped) with HF's balance loss
//   over the layers, the weights given to PyTorch as zerotrain's MixtralForCausalLM export
//   (sharded, config.json checked key by key);
// - DeepSpeed's top-1 with capacity factor 1 (tokens dropped), MoE every second block
//   (decoder_sparse_step 2), l_aux summed over MoE blocks;
// - DeepSpeed's top-2 with noise off and capacity factor 1.25;
// - Qwen2-MoE's routing (top-2 not renormalised) with its sigmoid-gated shared expert;
// - DeepSpeed's PR-MoE: top-1 with drops and the residual MLP mixed by a softmax.
// A missing python3-torch fails the test (never a skip).
#include <gtest/gtest.h>

#include <string>

#include "testing/model_oracle.h"

namespace zt {
namespace {

struct MoeCase {
  const char* name;
  MoeRouting routing;
  int k;
  double capacity_factor;
  int every;
  double coef;
  int shared = 0;             // a shared expert this wide (Qwen2-MoE's, sigmoid-gated)
  bool residual = false;      // DeepSpeed's PR-MoE residual MLP
  bool renormalize = true;    // mixtral routing: norm_topk_prob
};

// The case's MoE keys for the reference: HF Mixtral's (the weights then reach it as
// zerotrain's MixtralForCausalLM export), or DeepSpeed's gate with zerotrain's tensors.
std::string moe_json(const MoeCase& c) {
  const bool hf = c.routing == MoeRouting::kMixtral && c.shared == 0 && c.renormalize;
  const std::string common = R"(, "num_local_experts": 4, "num_experts_per_tok": )" + std::to_string(c.k) +
                             R"(, "router_aux_loss_coef": )" + std::to_string(c.coef);
  if (hf) return common + R"(, "output_router_logits": true, "model_type": "mixtral"})";
  const std::string gate = c.routing == MoeRouting::kMixtral
                               ? std::string(R"({"routing": "mixtral", "renormalize": )") + (c.renormalize ? "true}" : "false}")
                               : R"({"routing": "deepspeed", "capacity_factor": )" + std::to_string(c.capacity_factor) +
                                     R"(, "min_capacity": 0, "drop_tokens": true, "use_rts": false, "rsample": false,
            "second_sampling": false, "drop_policy": "probs", "renormalize": true})";
  return common + R"(, "moe_intermediate_size": 48, "decoder_sparse_step": )" + std::to_string(c.every) +
         R"(, "shared_expert_intermediate_size": )" + std::to_string(c.shared) +
         R"(, "use_residual": )" + (c.residual ? "true" : "false") + R"(, "moe_gate": )" + gate + "}";
}

class MoeOracle : public ::testing::TestWithParam<MoeCase> {};

TEST_P(MoeOracle, MatchesPyTorch) {
  const MoeCase& c = GetParam();
  const bool mixtral = c.routing == MoeRouting::kMixtral && c.shared == 0 && c.renormalize;  // HF's Mixtral
  testing::OracleRun run{c.name, GptConfig{}, 2.0f, "", "tests/oracle/mixtral_reference.py", mixtral ? 40000u : 0u};
  GptConfig& m = run.model;
  m.set_family(ModelFamily::kLlama);
  m.n_layer = 2;
  m.n_head = 4;
  m.n_kv_head = 2;
  m.n_embd = 64;
  m.intermediate_size = 96;
  m.vocab_size = 211;
  m.n_positions = 32;
  m.moe.num_experts = 4;
  m.moe.intermediate_size = mixtral ? 0 : 48;  // Mixtral's experts are intermediate_size wide
  m.moe.every = c.every;
  m.moe.aux_loss_coef = c.coef;
  m.moe.gate.routing = c.routing;
  m.moe.gate.k = c.k;
  m.moe.gate.capacity_factor = c.capacity_factor;
  m.moe.gate.min_capacity = 0;
  m.moe.gate.use_rts = false;
  m.moe.gate.second_sampling = false;
  m.moe.gate.renormalize = c.renormalize;
  m.moe.shared_intermediate_size = c.shared;
  m.moe.use_residual = c.residual;
  run.model_json = R"({"num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "hidden_size": 64,
    "intermediate_size": 96, "vocab_size": 211, "rms_norm_eps": 1e-5, "rope_theta": 10000.0,
    "tie_word_embeddings": false)" + moe_json(c);
  testing::run_model_oracle(run);
}

INSTANTIATE_TEST_SUITE_P(Oracle, MoeOracle,
                         ::testing::Values(MoeCase{"mixtral_top2", MoeRouting::kMixtral, 2, 1.0, 1, 0.02},
                                           MoeCase{"deepspeed_top1_drops_every2", MoeRouting::kDeepSpeed, 1, 1.0, 2, 0.01},
                                           MoeCase{"deepspeed_top2", MoeRouting::kDeepSpeed, 2, 1.25, 1, 0.01},
                                           MoeCase{"qwen2_moe_shared_expert_top2", MoeRouting::kMixtral, 2, 1.0, 1,
                                                   0.01, 64, false, false},
                                           MoeCase{"pr_moe_residual_top1_drops", MoeRouting::kDeepSpeed, 1, 1.0, 1,
                                                   0.01, 0, true}),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace zt
