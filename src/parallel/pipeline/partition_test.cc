// Stage partitions worked by hand.
#include "parallel/pipeline/partition.h"

#include <gtest/gtest.h>

namespace zt {
namespace {

TEST(StagePartition, Uniform) {
  GptConfig c;
  c.n_layer = 10;
  EXPECT_EQ(partition_stages(c, 4, StagePartition::kUniform).value(), (std::vector<int>{0, 3, 6, 8, 10}));
  EXPECT_EQ(partition_stages(c, 1, StagePartition::kUniform).value(), (std::vector<int>{0, 10}));
  EXPECT_FALSE(partition_stages(c, 11, StagePartition::kUniform).ok());
}

TEST(StagePartition, ParametersGivesTheEndStagesFewerBlocks) {
  GptConfig c;  // GPT-2 small: the embeddings weigh about 5.5 blocks, the LM head's wte copy 5.4
  const auto two = partition_stages(c, 2, StagePartition::kParameters).value();
  EXPECT_EQ(two, (std::vector<int>{0, 6, 12}));  // balanced: embeddings vs tied head cancel out
  const auto four = partition_stages(c, 4, StagePartition::kParameters).value();
  ASSERT_EQ(four.size(), 5u);
  EXPECT_LT(four[1] - four[0], 3) << "the first stage carries the embeddings";
  EXPECT_LT(four[4] - four[3], 3) << "the last stage carries the head";
  EXPECT_EQ(four[4], 12);
}

TEST(StagePartition, FlopsGivesTheLastStageFewerBlocks) {
  GptConfig c;  // GPT-2 small: the LM head is about 5.4 blocks of matmul work, the embedding ~0
  const auto two = partition_stages(c, 2, StagePartition::kFlops).value();
  EXPECT_EQ(two, (std::vector<int>{0, 9, 12}));
}

TEST(StagePartition, FlopsCountsLlamaBlocksAndHead) {
  // stories110M, untied: a block is 2C^2 + 2 KV C + 3 C I + 2C = 7,079,424 weights; the head
  // 32000 x 768 = 24,576,000 (~3.5 blocks). Two stages of 12 blocks: 8 + (4 + head) is
  // 56.6M vs 52.9M; 7 + (5 + head) 49.6M vs 60.0M; so 8 / 4.
  GptConfig c;
  c.set_family(ModelFamily::kLlama);
  c.n_layer = 12;
  c.n_head = 12;
  c.n_embd = 768;
  c.intermediate_size = 2048;
  c.vocab_size = 32000;
  EXPECT_EQ(partition_stages(c, 2, StagePartition::kFlops).value(), (std::vector<int>{0, 8, 12}));
  c.intermediate_size = 8 * 2048;  // a block now outweighs the head by far: an even split
  EXPECT_EQ(partition_stages(c, 2, StagePartition::kFlops).value(), (std::vector<int>{0, 6, 12}));
}

}  // namespace
}  // namespace zt
