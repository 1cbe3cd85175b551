// Partition arithmetic: shards tile the space; counts of a sub-range.
#include "parallel/zero/partition.h"

#include <gtest/gtest.h>

#include <numeric>

namespace zt {
namespace {

TEST(Partition, ShardsTileTheSpace) {
  for (int world : {1, 2, 3, 4, 8}) {
    for (size_t numel : {1u, 7u, 10u, 1000u, 1001u}) {
      Partition p(numel, world);
      size_t next = 0;
      for (int r = 0; r < world; ++r) {
        const ElementRange s = p.shard(r);
        EXPECT_EQ(s.begin, next);
        EXPECT_LE(s.size(), p.shard_size());
        next = s.end;
      }
      EXPECT_EQ(next, numel);
    }
  }
}

TEST(Partition, CountsOfARange) {
  Partition p(10, 3);  // shards [0,4) [4,8) [8,10)
  EXPECT_EQ(p.counts({2, 9}), (std::vector<size_t>{2, 4, 1}));
  EXPECT_EQ(p.counts({4, 8}), (std::vector<size_t>{0, 4, 0}));
  const auto c = p.counts({0, 10});
  EXPECT_EQ(std::accumulate(c.begin(), c.end(), size_t{0}), 10u);
  EXPECT_TRUE(shards_optimizer(ZeroStage::kOptimizer));
  EXPECT_FALSE(shards_gradients(ZeroStage::kOptimizer));
  EXPECT_TRUE(shards_parameters(ZeroStage::kParameters));
}

}  // namespace
}  // namespace zt
