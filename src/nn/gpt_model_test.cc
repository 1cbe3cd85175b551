// Whole-model checks: parameter count, finite differences through every tensor,
// padding invariance and refused batches (the Trainer's own checks are in
// engine/trainer_test.cc).
#include "nn/gpt_model.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "kernels/kernel_args.h"
#include "nn/gpt_params.h"
#include "tensor/buffer.h"
#include "testing/gradcheck.h"
#include "testing/synthetic_data.h"
#include "testing/tiny_model.h"

namespace zt {
namespace {

using testing::random_tokens;
using testing::tiny_gpt_config;

TEST(GptParams, Gpt2SmallHasHuggingFaceParameterCount) {
  const GptConfig c = GptConfig::gpt2_small();
  EXPECT_EQ(c.num_parameters(), 124439808);
  EXPECT_EQ(build_gpt_param_table(c).numel(), 124439808u);
}

TEST(GptParams, LayersAreContiguousAndDecayIsTwoDimensional) {
  const GptConfig c = tiny_gpt_config();
  const ParamTable t = build_gpt_param_table(c);
  size_t expected = 0;
  for (const TensorSpec& s : t.specs()) {
    EXPECT_EQ(s.offset, expected) << s.name;
    expected += s.numel;
    EXPECT_EQ(s.weight_decay, s.shape.size() == 2) << s.name;
  }
  EXPECT_EQ(t.layer_range(0).end, t.layer_range(1).begin);
}

// Acceptance item 3: fp32 AdamW holds 4 bytes of parameters, 4 of gradients and 8 of
// optimizer state per parameter.

TEST(GptModel, FiniteDifferencesThroughEveryTensor) {
  const int B = 2, T = 6;
  testing::TinyModel run(tiny_gpt_config(), B, T);
  // Larger weights than the 0.02 init so every path carries signal.
  Rng rng(7);
  for (size_t i = 0; i < run.params.size(); ++i) run.params[i] += static_cast<float>(rng.normal() * 0.3);
  auto x = random_tokens(B * T, run.cfg.vocab_size, 1);
  auto y = random_tokens(B * T, run.cfg.vocab_size, 2);
  y[3] = kIgnoreIndex;
  const double l0 = run.loss(x, y, B, T);
  EXPECT_GT(l0, 0.0);
  int64_t counted = 0;
  for (int32_t v : y) counted += v >= 0;
  run.grads.zero();
  ASSERT_TRUE(run.model->backward(x.data(), y.data(), 1.0f / static_cast<float>(counted)).ok());
  for (const TensorSpec& s : run.table.specs()) {
    std::vector<float> analytic(run.grads.data() + s.offset, run.grads.data() + s.offset + s.numel);
    testing::expect_gradient(s.name, run.params.data() + s.offset, s.numel, analytic,
                             [&] { return run.loss(x, y, B, T); }, 1e-2f, 2e-2, 2e-4, 12);
  }
}

TEST(GptModel, PaddedVocabularyChangesNothing) { testing::expect_padding_changes_nothing(tiny_gpt_config(), 32, 2, 8); }

TEST(GptModel, RejectsOutOfVocabularyTokens) {
  testing::TinyModel run(tiny_gpt_config(), 1, 4);
  std::vector<int32_t> x = {1, 2, 23, 0}, y = {1, 2, 3, -1};
  Status s = run.model->validate_batch(x.data(), y.data(), 1, 4);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("input token 23 at position 2"), std::string::npos) << s.message();
  x[2] = 5;
  y[0] = -2;
  s = run.model->validate_batch(x.data(), y.data(), 1, 4);
  EXPECT_NE(s.message().find("target token -2"), std::string::npos) << s.message();
  EXPECT_FALSE(run.model->validate_batch(x.data(), y.data(), 1, 9).ok());
}

}  // namespace
}  // namespace zt
