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
  testing::expect_finite_differences(tiny_gpt_config(), 2, 6, "");
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
