// The knobs compose: configurations that are neither preset (LayerNorm with SwiGLU and
// grouped-query attention; RMSNorm with GELU, rotary positions and q/k/v biases only, as
// Qwen2 has) build a table the size GptConfig counts and pass finite differences through
// every tensor, biases included; validate() refuses the combinations the model does not
// compute, naming the field.
#include <gtest/gtest.h>

#include <string>

#include "nn/gpt_config.h"
#include "nn/gpt_params.h"
#include "testing/synthetic_data.h"
#include "testing/tiny_model.h"

namespace zt {
namespace {

GptConfig tiny() { return testing::shaped_config(2, 4, 32, 61, 16); }

// LayerNorm, SwiGLU, learned positions, q/k/v with 2 kv heads, every bias, untied head.
GptConfig layernorm_swiglu_gqa() {
  GptConfig c = tiny();
  c.mlp = MlpKind::kSwiGlu;
  c.intermediate_size = 40;
  c.fused_qkv = false;
  c.n_kv_head = 2;
  c.tie_word_embeddings = false;
  return c;
}

// RMSNorm, GELU, rotary positions, q/k/v biases only (Qwen2's rule), tied head.
GptConfig rmsnorm_gelu_rotary_qkv_bias() {
  GptConfig c = tiny();
  c.norm = NormKind::kRmsNorm;
  c.positions = PositionKind::kRotary;
  c.fused_qkv = false;
  c.out_bias = c.mlp_bias = false;
  c.scaled_residual_init = false;
  return c;
}

TEST(GptKnobs, TableMatchesTheCountForMixedConfigs) {
  for (const GptConfig& c : {layernorm_swiglu_gqa(), rmsnorm_gelu_rotary_qkv_bias()}) {
    ASSERT_TRUE(c.validate().ok()) << c.validate().to_string();
    const ParamTable t = build_gpt_param_table(c);
    EXPECT_EQ(t.numel(), static_cast<size_t>(c.num_parameters()));
    EXPECT_EQ(t.find("wpe.weight") >= 0, !c.rotary());
    EXPECT_EQ(t.find("h.0.ln_1.bias") >= 0, !c.rms_norm());
    EXPECT_EQ(t.find("h.1.mlp.c_proj.bias") >= 0, c.mlp_bias);
    EXPECT_EQ(t.find("h.0.attn.c_proj.bias") >= 0, c.out_bias);
  }
}

TEST(GptKnobs, FiniteDifferencesThroughEveryTensorOfMixedConfigs) {
  testing::expect_finite_differences(layernorm_swiglu_gqa(), 2, 6, "layernorm_swiglu_gqa ");
  testing::expect_finite_differences(rmsnorm_gelu_rotary_qkv_bias(), 2, 6, "rmsnorm_gelu_rotary_qkv_bias ");
}

TEST(GptKnobs, ValidateRefusesWhatTheModelDoesNotCompute) {
  GptConfig c = tiny();
  c.positions = PositionKind::kRotary;  // on the fused c_attn
  EXPECT_EQ(c.validate().message(), "model.positions: a fused qkv projection computes neither rotary positions nor "
                                    "grouped-query attention; use separate q, k, v projections");
  c = tiny();
  c.n_kv_head = 2;
  EXPECT_EQ(c.validate().message().rfind("model.num_key_value_heads: a fused qkv projection", 0), 0u);
  c = tiny();
  c.mlp = MlpKind::kSwiGlu;  // SwiGLU names its width
  EXPECT_EQ(c.validate().message(), "model.intermediate_size: expected a positive integer, got 0");
  c = tiny();
  c.fused_qkv = false;
  c.positions = PositionKind::kRotary;
  c.n_embd = 36;
  c.n_head = 4;  // head size 9
  EXPECT_EQ(c.validate().message().rfind("model.hidden_size: the head dimension 9", 0), 0u);
}

}  // namespace
}  // namespace zt
