// Windows over shards, the layout-independent global batch, epoch coverage, and
// validation batches.
#include "data/dataset.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <set>
#include <vector>

#include "testing/temp_dir_test.h"

namespace zt {
namespace {

class DatasetTest : public testing::TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    // Two shards: tokens count up, so a window's content identifies it.
    for (int shard = 0; shard < 2; ++shard) {
      std::vector<uint16_t> t(shard == 0 ? 41 : 33);
      for (size_t i = 0; i < t.size(); ++i) t[i] = static_cast<uint16_t>(shard * 1000 + i);
      ASSERT_TRUE(write_token_file(dir_ + "/shard_" + std::to_string(shard) + ".bin", t.data(), t.size(),
                                   TokenFileFormat::kLlmc).ok());
    }
  }
};

TEST_F(DatasetTest, WindowsShiftTargetsByOneWithinShards) {
  auto d = TokenDataset::open({dir_ + "/shard_*.bin"}, "auto", 2000, 8);
  ASSERT_TRUE(d.ok()) << d.status().to_string();
  EXPECT_EQ(d->shards().size(), 2u);
  EXPECT_EQ(d->num_windows(), 5 + 4);  // (41-1)/8 and (33-1)/8
  std::vector<int32_t> x(8), y(8);
  d->window(6, x.data(), y.data());   // shard 1, window 1
  EXPECT_EQ(x[0], 1008);
  for (int t = 0; t < 8; ++t) EXPECT_EQ(y[t], x[t] + 1);
  EXPECT_FALSE(TokenDataset::open({dir_ + "/shard_*.bin"}, "auto", 1000, 8).ok()) << "token 1000 >= vocab";
  auto none = TokenDataset::open({dir_ + "/nothing_*.bin"}, "auto", 2000, 8);
  EXPECT_EQ(none.status().message(), "no token files match " + dir_ + "/nothing_*.bin");
  auto short_seq = TokenDataset::open({dir_ + "/shard_1.bin"}, "auto", 2000, 40);
  EXPECT_NE(short_seq.status().message().find("too few for one sequence"), std::string::npos);
}

// The global batch is the same whatever the data-parallel size and accumulation.
TEST_F(DatasetTest, GlobalBatchIsLayoutIndependent) {
  auto d = TokenDataset::open({dir_ + "/shard_*.bin"}, "auto", 2000, 4);
  ASSERT_TRUE(d.ok());
  const int G = 8;
  auto rows_of = [&](int dp, int gas, int mb, int64_t step) {
    BatchSampler sampler(&d.value(), 7, G, mb, gas);
    std::vector<int32_t> firsts;
    for (int r = 0; r < dp; ++r) {
      for (int m = 0; m < gas; ++m) {
        const Batch b = sampler.micro_batch(step, r, m);
        for (int j = 0; j < b.rows; ++j) firsts.push_back(b.tokens[static_cast<size_t>(j) * 4]);
      }
    }
    return firsts;
  };
  for (int64_t step : {0, 1, 5}) {
    const auto single = rows_of(1, 4, 2, step);
    EXPECT_EQ(rows_of(2, 2, 2, step), single);
    EXPECT_EQ(rows_of(4, 1, 2, step), single);
    EXPECT_EQ(rows_of(1, 1, 8, step), single);
  }
}

TEST_F(DatasetTest, EveryWindowOncePerEpochAndReshuffled) {
  auto d = TokenDataset::open({dir_ + "/shard_*.bin"}, "auto", 2000, 4);
  ASSERT_TRUE(d.ok());
  const int64_t W = d->num_windows();
  BatchSampler sampler(&d.value(), 11, 1, 1, 1);
  std::vector<int32_t> epoch0, epoch1;
  for (int64_t s = 0; s < W; ++s) epoch0.push_back(sampler.micro_batch(s, 0, 0).tokens[0]);
  for (int64_t s = W; s < 2 * W; ++s) epoch1.push_back(sampler.micro_batch(s, 0, 0).tokens[0]);
  EXPECT_EQ(std::set<int32_t>(epoch0.begin(), epoch0.end()).size(), static_cast<size_t>(W));
  EXPECT_EQ(std::set<int32_t>(epoch1.begin(), epoch1.end()).size(), static_cast<size_t>(W));
  EXPECT_NE(epoch0, epoch1);
  BatchSampler again(&d.value(), 11, 1, 1, 1);
  EXPECT_EQ(again.micro_batch(3, 0, 0).tokens, sampler.micro_batch(3, 0, 0).tokens) << "deterministic";
}

TEST_F(DatasetTest, ValidationBatchesAreFixedAndSpread) {
  auto d = TokenDataset::open({dir_ + "/shard_*.bin"}, "auto", 2000, 4);
  ASSERT_TRUE(d.ok());
  const auto a = validation_batches(d.value(), 2, 3), b = validation_batches(d.value(), 2, 3);
  ASSERT_EQ(a.size(), 3u);
  for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i].tokens, b[i].tokens);
  EXPECT_GE(a.back().tokens[4], 1000) << "spread into the second shard";
  EXPECT_TRUE(validation_batches(d.value(), 64, 1).empty()) << "fewer windows than one batch";
}

}  // namespace
}  // namespace zt
