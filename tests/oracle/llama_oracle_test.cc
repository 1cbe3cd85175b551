// PyTorch oracle for the Llama family (issue 15, acceptance 1): tests/oracle/llama_reference.py
// builds the same Llama in plain PyTorch (HF modeling_llama conventions, no transformers)
// from the safetensors zerotrain exports (LlamaForCausalLM names, sharded with an index,
// config.json: checkpoint/hf_llama.h), runs the same tokens, and returns logits, loss, every
// parameter gradient and 10 AdamW steps (DeepSpeed WarmupLR + global norm clipping).
// Tolerances, fp32 (as the GPT-2 oracle):
//   logits, gradients: max|zt - torch| / max|torch| per tensor <= 1e-4
//   loss and each training step's loss: |zt - torch| / |torch| <= 1e-5
// Cases: grouped-query (4 heads, 2 kv heads, untied), multi-query (1 kv head) with a
// padded vocabulary and boosted weights, tied embeddings with rope_theta 500000, routed
// blocks, HF's attention_bias + mlp_bias (biases on every projection), and the Qwen2 preset
// (q/k/v biases, exported as Qwen2ForCausalLM): knobs and presets, not new code paths.
// A missing python3-torch fails the test (never a skip).
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "testing/model_oracle.h"

namespace zt {
namespace {

struct LlamaCase {
  const char* name;
  int n_kv_head;
  bool tied;
  int padded_vocab;    // 0: unpadded
  float weight_boost;  // multiplies every matrix after init (1: init as is)
  double rope_theta;
  bool routed = false;  // batch 0 under random-LTD on block 0 (RoPE at the kept positions) and layer drop on block 1
  bool biases = false;  // HF LlamaConfig attention_bias and mlp_bias: the bias knobs of the one model
  ModelFamily family = ModelFamily::kLlama;  // kQwen2: the Qwen2 preset (q/k/v biases), exported as Qwen2ForCausalLM
};

class LlamaOracle : public ::testing::TestWithParam<LlamaCase> {};

TEST_P(LlamaOracle, MatchesPyTorch) {
  const LlamaCase& c = GetParam();
  // The reference builds its model from zerotrain's HF export, sharded at 40 KB.
  testing::OracleRun run{c.name, GptConfig{}, c.weight_boost, "", "tests/oracle/llama_reference.py", 40000};
  GptConfig& m = run.model;
  m.set_family(c.family);
  m.n_layer = 2;
  m.n_head = 4;
  m.n_kv_head = c.n_kv_head;
  m.n_embd = 64;
  m.intermediate_size = 96;
  m.vocab_size = 211;
  m.n_positions = 32;
  m.padded_vocab_size = c.padded_vocab;
  m.rms_norm_eps = 1e-5f;
  m.rope_theta = c.rope_theta;
  m.tie_word_embeddings = c.tied;
  if (c.biases) m.qkv_bias = m.out_bias = m.mlp_bias = true;
  char theta[64];
  std::snprintf(theta, sizeof(theta), "%.17g", c.rope_theta);
  run.model_json = R"({"num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": )" +
                   std::to_string(c.n_kv_head > 0 ? c.n_kv_head : 4) +
                   R"(, "hidden_size": 64, "intermediate_size": 96, "vocab_size": 211, "rms_norm_eps": 1e-5, "rope_theta": )" +
                   theta + R"(, "tie_word_embeddings": )" + (c.tied ? "true" : "false") +
                   (c.biases ? R"(, "attention_bias": true, "mlp_bias": true)" : "") +
                   (c.family == ModelFamily::kQwen2 ? R"(, "model_type": "qwen2"})" : "}");
  if (c.routed) run.routes = testing::oracle_routes(3, 16, 9, 6);
  testing::run_model_oracle(run);
}

INSTANTIATE_TEST_SUITE_P(Oracle, LlamaOracle,
                         ::testing::Values(LlamaCase{"gqa", 2, false, 0, 1.0f, 10000.0},
                                           LlamaCase{"mqa_padded_boosted", 1, false, 256, 5.0f, 10000.0},
                                           LlamaCase{"mha_tied_theta500k", 0, true, 0, 3.0f, 500000.0},
                                           LlamaCase{"gqa_random_ltd_and_layer_drop", 2, false, 0, 2.0f, 10000.0, true},
                                           LlamaCase{"gqa_attention_and_mlp_biases", 2, false, 0, 2.0f, 10000.0, false,
                                                     true},
                                           LlamaCase{"qwen2_tied_theta1m", 2, true, 0, 2.0f, 1000000.0, false, false,
                                                     ModelFamily::kQwen2}),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace zt
