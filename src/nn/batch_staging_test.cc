// BatchStaging: the staged copies hold the host's tokens and targets, a null array stays
// null, slots start at zero on every stage(), the loss kernel's sums come back in one
// read in slot order, and a larger step grows the arenas.
#include "nn/batch_staging.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

namespace zt {
namespace {

std::vector<int32_t> read_ints(const Backend& b, const int32_t* p, size_t n) {
  std::vector<int32_t> out(n);
  b.copy_to_host(out.data(), p, n * sizeof(int32_t));
  return out;
}

TEST(BatchStaging, CopiesTokensAndTargetsAndReadsLossesInOneCopy) {
  const Backend& b = cpu_backend();
  BatchStaging staging(b);
  const std::vector<int32_t> t0 = {1, 2, 3, 4}, y0 = {2, 3, -1, 5}, t1 = {7, 8, 9, 10}, y1 = {-1, -1, 1, 0};
  auto first = staging.stage({{t0.data(), y0.data()}, {t1.data(), y1.data()}, {nullptr, y1.data()}}, 4);
  ASSERT_TRUE(first.ok()) << first.status().to_string();
  std::vector<MicroBatch> staged = first.value();
  ASSERT_EQ(staged.size(), 3u);
  EXPECT_NE(staged[0].tokens, t0.data());
  EXPECT_EQ(read_ints(b, staged[0].tokens, 4), t0);
  EXPECT_EQ(read_ints(b, staged[0].targets, 4), y0);
  EXPECT_EQ(read_ints(b, staged[1].tokens, 4), t1);
  EXPECT_EQ(read_ints(b, staged[1].targets, 4), y1);
  EXPECT_EQ(staged[2].tokens, nullptr);
  const std::vector<float> losses = {0.5f, 0.25f, 8.0f, 1.0f};
  b.ops().loss_sum(staging.loss_slot(0), losses.data(), staged[0].targets, 4);
  b.ops().loss_sum(staging.loss_slot(1), losses.data(), staged[1].targets, 4);
  const std::vector<LossSum> got = staging.read_losses(3);
  EXPECT_EQ(got[0].sum, 1.75);
  EXPECT_EQ(got[0].count, 3);
  EXPECT_EQ(got[1].sum, 9.0);
  EXPECT_EQ(got[1].count, 2);
  EXPECT_EQ(got[2].sum, 0.0);  // never written: zeroed by stage()
  EXPECT_EQ(got[2].count, 0);

  const std::vector<int32_t> big(64, 3);
  std::vector<MicroBatch> host(5, MicroBatch{big.data(), big.data()});
  auto second = staging.stage(host, 64);
  ASSERT_TRUE(second.ok()) << second.status().to_string();
  staged = second.value();
  EXPECT_EQ(read_ints(b, staged[4].targets, 64), big);
  EXPECT_EQ(staging.read_losses(5)[1].sum, 0.0);  // slots written before are zero again
}

}  // namespace
}  // namespace zt
