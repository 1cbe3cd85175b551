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

}  // namespace
}  // namespace zt
