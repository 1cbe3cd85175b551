// The Llama preset in GptModel (nn/gpt_layers.cc): parameter count and table, finite
// differences through every tensor for grouped-query, multi-query and tied models, padding
// invariance, the tensor-parallel refusals, and llama3 rope scaling against HF's formula.
// The PyTorch oracle is tests/oracle/llama_oracle_test.cc; every parallel mode's exactness
// is in the engine's tests, run for both families.
#include "nn/gpt_model.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "core/rng.h"
#include "kernels/kernel_args.h"
#include "nn/gpt_params.h"
#include "tensor/buffer.h"
#include "testing/gradcheck.h"
#include "testing/synthetic_data.h"
#include "testing/tiny_model.h"

namespace zt {
namespace {


GptConfig tiny_llama(int n_kv_head, bool tied) {
  GptConfig c = testing::shaped_config(2, 4, 32, 61, 16, ModelFamily::kLlama);
  c.n_kv_head = n_kv_head;
  c.intermediate_size = 48;
  c.rms_norm_eps = 1e-5f;
  c.rope_theta = 10000.0;
  c.tie_word_embeddings = tied;
  return c;
}


TEST(LlamaParams, TableMatchesTheParameterCount) {
  for (bool tied : {false, true}) {
    const GptConfig c = tiny_llama(2, tied);
    ASSERT_TRUE(c.validate().ok());
    const ParamTable t = build_gpt_param_table(c);
    EXPECT_EQ(t.numel(), static_cast<size_t>(c.num_parameters()));
    size_t expected = 0;
    for (const TensorSpec& s : t.specs()) {
      EXPECT_EQ(s.offset, expected) << s.name;
      expected += s.numel;
      EXPECT_EQ(s.weight_decay, s.shape.size() == 2) << s.name;
    }
    EXPECT_EQ(t.find("lm_head.weight") >= 0, !tied);
    EXPECT_EQ(t.at(t.find("layers.1.self_attn.k_proj.weight")).shape, (std::vector<int64_t>{16, 32}));
    EXPECT_EQ(t.at(t.find("norm.weight")).layer, c.n_layer);
  }
  // TinyLlama-1.1B: 1,100,048,384 parameters (HF model card / safetensors sizes).
  GptConfig tl = tiny_llama(4, false);
  tl.n_layer = 22;
  tl.n_head = 32;
  tl.n_kv_head = 4;
  tl.n_embd = 2048;
  tl.intermediate_size = 5632;
  tl.vocab_size = 32000;
  EXPECT_EQ(tl.num_parameters(), 1100048384);
  // Llama-2-7B (the preset of issue 29's capacity run): 6,738,415,616 parameters.
  tl.n_layer = 32;
  tl.n_kv_head = 32;
  tl.n_embd = 4096;
  tl.intermediate_size = 11008;
  EXPECT_EQ(tl.num_parameters(), 6738415616);
}

TEST(LlamaParams, ValidateRefusesBadShapes) {
  GptConfig c = tiny_llama(3, false);  // 4 heads, 3 kv heads
  EXPECT_NE(c.validate().message().find("num_key_value_heads"), std::string::npos);
  c = tiny_llama(2, false);
  c.n_embd = 36;  // head dim 9
  c.n_head = 4;
  EXPECT_NE(c.validate().message().find("even"), std::string::npos);
  c = tiny_llama(2, false);
  EXPECT_FALSE(c.same_model(tiny_llama(1, false)));
  EXPECT_FALSE(c.same_model(tiny_llama(2, true)));
  EXPECT_TRUE(c.same_model(tiny_llama(2, false)));
}

TEST(LlamaModel, TensorParallelNeedsWholeKvHeadsPerRank) {
  GptConfig c = tiny_llama(2, false);
  c.vocab_size = 64;
  GptModelOptions o;
  o.max_batch = 1;
  o.max_seq = 4;
  o.layout.tp_size = 2;
  EXPECT_TRUE(GptModel::check_supported(c, o).ok());
  o.layout.tp_size = 4;  // divides the 4 query heads, not the 2 kv heads
  EXPECT_NE(GptModel::check_supported(c, o).message().find("does not divide num_key_value_heads=2"), std::string::npos);
  c.n_kv_head = 4;
  c.intermediate_size = 50;
  EXPECT_NE(GptModel::check_supported(c, o).message().find("intermediate_size=50"), std::string::npos);
}

// HF _compute_llama3_parameters, written out for Llama-3.2-1B's constants (factor 32, low 1,
// high 4, original context 8192, theta 500000, head size 64).
TEST(LlamaModel, Llama3RopeScalingFollowsHuggingFace) {
  GptConfig c = tiny_llama(2, false);
  c.n_embd = 256;
  c.n_head = 4;  // head size 64
  c.rope_theta = 500000.0;
  c.rope_scaling = RopeScaling{"llama3", 32.0, 1.0, 4.0, 8192};
  ASSERT_TRUE(c.validate().ok());
  const std::vector<double> inv = c.rope_inv_freq();
  ASSERT_EQ(inv.size(), 32u);
  const double pi = 3.14159265358979323846;
  int kept = 0, divided = 0, smoothed = 0;
  for (int i = 0; i < 32; ++i) {
    const double f = 1.0 / std::pow(500000.0, 2.0 * i / 64), wavelen = 2 * pi / f;
    double want = f;
    if (wavelen < 8192.0 / 4.0) {
      ++kept;
    } else if (wavelen > 8192.0 / 1.0) {
      want = f / 32.0;
      ++divided;
    } else {
      const double smooth = (8192.0 / wavelen - 1.0) / (4.0 - 1.0);
      want = (1 - smooth) * f / 32.0 + smooth * f;
      ++smoothed;
    }
    EXPECT_NEAR(inv[static_cast<size_t>(i)], want, 1e-15 * f) << i;
  }
  EXPECT_GT(kept, 0);  // all three regimes are exercised
  EXPECT_GT(divided, 0);
  EXPECT_GT(smoothed, 0);
  c.rope_scaling.type = "yarn";
  EXPECT_NE(c.validate().message().find("rope_type"), std::string::npos);
}

struct GradCase {
  const char* name;
  int n_kv_head;
  bool tied;
};

class LlamaGradcheck : public ::testing::TestWithParam<GradCase> {};

TEST_P(LlamaGradcheck, FiniteDifferencesThroughEveryTensor) {
  const GradCase& gc = GetParam();
  testing::expect_finite_differences(tiny_llama(gc.n_kv_head, gc.tied), 2, 8, std::string(gc.name) + " ");
}

INSTANTIATE_TEST_SUITE_P(Llama, LlamaGradcheck,
                         ::testing::Values(GradCase{"gqa", 2, false}, GradCase{"mqa", 1, false},
                                           GradCase{"mha_tied", 0, true}),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(LlamaModel, PaddedVocabularyChangesNothing) {
  testing::expect_padding_changes_nothing(tiny_llama(2, false), 64, 2, 8);
}

}  // namespace
}  // namespace zt
