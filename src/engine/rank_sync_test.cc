// Rank agreements (rank_sync.h) on 3 thread ranks and on a single process (null group).
#include "engine/rank_sync.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "comm/thread_world.h"

namespace zt {
namespace {

TEST(RankSync, ThreeRanksAgree) {
  ThreadWorld world(3, CommOptions{});
  std::vector<double> sums(3);
  std::vector<std::vector<double>> rows(3);
  std::vector<std::vector<std::string>> names(3);
  std::vector<int> decided(3, -1);
  const Status s = run_ranks(3, [&](int rank) -> Status {
    auto g = world.group(rank);
    ZT_RETURN_IF_ERROR(all_ranks_ready(g.get()));
    ZT_ASSIGN_OR_RETURN(sums[rank], sum_over_ranks(g.get(), 0.5 + rank));
    ZT_ASSIGN_OR_RETURN(rows[rank], rows_of_ranks(g.get(), {10.0 * rank, 10.0 * rank + 1}));
    ZT_ASSIGN_OR_RETURN(names[rank], strings_at_root(g.get(), "host" + std::to_string(rank)));
    ZT_ASSIGN_OR_RETURN(const bool d, root_decides(g.get(), rank == 0));  // only rank 0 says true
    decided[rank] = d ? 1 : 0;
    return Status::OK();
  });
  ASSERT_TRUE(s.ok()) << s.to_string();
  for (int r = 0; r < 3; ++r) {
    EXPECT_EQ(sums[r], 4.5);
    EXPECT_EQ(rows[r], (std::vector<double>{0, 1, 10, 11, 20, 21}));
    EXPECT_EQ(decided[r], 1) << "rank 0's decision on rank " << r;
  }
  EXPECT_EQ(names[0], (std::vector<std::string>{"host0", "host1", "host2"}));
  EXPECT_TRUE(names[1].empty());
}

TEST(RankSync, ASingleProcessGetsItsOwnValues) {
  EXPECT_TRUE(all_ranks_ready(nullptr).ok());
  EXPECT_EQ(sum_over_ranks(nullptr, 2.5).value(), 2.5);
  EXPECT_EQ(rows_of_ranks(nullptr, {1.0, 2.0}).value(), (std::vector<double>{1.0, 2.0}));
  EXPECT_EQ(strings_at_root(nullptr, "me").value(), std::vector<std::string>{"me"});
  EXPECT_FALSE(root_decides(nullptr, false).value());
}

}  // namespace
}  // namespace zt
