// The op lists count every weight GEMM of the model once per pass (forward: 2 flops per
// weight per token; backward: twice that, plus the recompute of checkpointed blocks),
// split exactly by tensor parallelism; op keys round-trip.
#include "planner/op_list.h"

#include <gtest/gtest.h>

namespace zt {
namespace {

GptConfig gpt(int L, int C, int H, int V) {
  GptConfig c;
  c.n_layer = L;
  c.n_embd = C;
  c.n_head = H;
  c.vocab_size = V;
  c.n_positions = 64;
  return c;
}

TEST(OpList, Gpt2GemmFlopsAreTwiceTheWeightsPerToken) {
  const GptConfig c = gpt(3, 64, 4, 100);
  const int B = 2, T = 16;
  const double tokens = B * T, weights = 3 * 12.0 * 64 * 64 + 64.0 * 100;
  const GptLayout whole;
  EXPECT_DOUBLE_EQ(gemm_flops(forward_ops(c, whole, B, T)), 2.0 * weights * tokens);
  EXPECT_DOUBLE_EQ(gemm_flops(backward_ops(c, whole, B, T, {})), 4.0 * weights * tokens);
  // Every block checkpointed: the backward also runs each block's forward again.
  EXPECT_DOUBLE_EQ(gemm_flops(backward_ops(c, whole, B, T, {true, true, true})),
                   4.0 * weights * tokens + 2.0 * (3 * 12.0 * 64 * 64) * tokens);
}

TEST(OpList, LlamaCountsGqaAndSwiglu) {
  GptConfig c = gpt(2, 64, 8, 128);
  c.set_family(ModelFamily::kLlama);
  c.n_kv_head = 2;
  c.intermediate_size = 160;
  const double kv = 2 * 8.0, per_block = 2 * 64.0 * 64 + 2 * 64.0 * kv + 3 * 64.0 * 160;
  EXPECT_DOUBLE_EQ(gemm_flops(forward_ops(c, GptLayout{}, 1, 8)), 2.0 * (2 * per_block + 64.0 * 128) * 8);
}

TEST(OpList, TensorParallelHalvesTheGemms) {
  GptConfig c = gpt(2, 64, 4, 100);
  GptLayout half;
  half.tp_size = 2;
  const double whole = gemm_flops(forward_ops(c, GptLayout{}, 2, 8));
  EXPECT_DOUBLE_EQ(gemm_flops(forward_ops(c, half, 2, 8)), whole / 2);
  GptLayout stage;  // a middle pipeline stage: blocks only
  stage.first_block = 1;
  stage.end_block = 2;
  stage.embedding = stage.head = false;
  EXPECT_DOUBLE_EQ(gemm_flops(forward_ops(c, stage, 2, 8)), 2.0 * 12 * 64 * 64 * 16);
}

TEST(OpList, KeysRoundTripAndBadKeysAreRefused) {
  for (const OpCall& o : backward_ops(gpt(1, 64, 4, 100), GptLayout{}, 2, 8, {true})) {
    OpCall back;
    ASSERT_TRUE(parse_op_key(o.key(), &back)) << o.key();
    EXPECT_EQ(back.key(), o.key());
    EXPECT_EQ(back.work(), o.work());
  }
  OpCall x;
  for (const char* bad : {"", "linear_forward 1 2", "linear_forward 1 2 3 4", "gemm 1 2 3", "adamw -4", "adamw x"}) {
    EXPECT_FALSE(parse_op_key(bad, &x)) << bad;
  }
}

TEST(OpList, CalibrationCallsSkipDegreesTheModelRefuses) {
  const GptConfig c = gpt(4, 96, 6, 100);  // 6 heads: tp 4 is refused
  const auto calls = calibration_calls(c, 16, {1, 2}, {1, 2, 4});
  bool tp2 = false, tp4 = false;
  for (const OpCall& o : calls) {
    if (o.kind == OpKind::kAttentionForward) {
      tp2 |= o.dims[3] == 3;
      tp4 |= o.dims[3] == 1;  // 6 / 4 heads does not exist
    }
  }
  EXPECT_TRUE(tp2);
  EXPECT_FALSE(tp4);
}

}  // namespace
}  // namespace zt
