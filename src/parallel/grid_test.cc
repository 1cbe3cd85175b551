// RankGrid against hand-worked layouts (the 16-rank example of the header, and the
// 8-rank dp2 x pp2 x tp2 job of the 3D tests).
#include "parallel/grid.h"

#include <gtest/gtest.h>

namespace zt {
namespace {

using Groups = std::vector<std::vector<int>>;

TEST(RankGrid, SixteenRanksWorkedExample) {
  auto g = RankGrid::create(16, /*tp=*/2, /*dp=*/2, /*pp=*/4);
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(g->groups(GridAxis::kTp), (Groups{{0, 1}, {2, 3}, {4, 5}, {6, 7}, {8, 9}, {10, 11}, {12, 13}, {14, 15}}));
  EXPECT_EQ(g->groups(GridAxis::kDp), (Groups{{0, 2}, {1, 3}, {4, 6}, {5, 7}, {8, 10}, {9, 11}, {12, 14}, {13, 15}}));
  EXPECT_EQ(g->groups(GridAxis::kPp), (Groups{{0, 4, 8, 12}, {1, 5, 9, 13}, {2, 6, 10, 14}, {3, 7, 11, 15}}));
  EXPECT_EQ(g->coord(13), (GridCoord{1, 0, 3}));
  for (int r = 0; r < 16; ++r) EXPECT_EQ(g->rank(g->coord(r)), r);
  EXPECT_EQ(g->group_color(13, GridAxis::kDp), 13);
  EXPECT_EQ(g->group_color(15, GridAxis::kDp), 13);
}

TEST(RankGrid, EightRanks3D) {
  auto g = RankGrid::create(8, 2, 2, 2);
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(g->group_of(5, GridAxis::kTp), (std::vector<int>{4, 5}));
  EXPECT_EQ(g->group_of(5, GridAxis::kDp), (std::vector<int>{5, 7}));
  EXPECT_EQ(g->group_of(5, GridAxis::kPp), (std::vector<int>{1, 5}));
}

TEST(RankGrid, PureDataParallelAndErrors) {
  auto g = RankGrid::create(3, 1, 3, 1);
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(g->groups(GridAxis::kDp), (Groups{{0, 1, 2}}));
  EXPECT_EQ(g->groups(GridAxis::kTp), (Groups{{0}, {1}, {2}}));
  EXPECT_EQ(RankGrid::create(4, 2, 3, 1).status().message(),
            "tp=2 x dp=3 x pp=1 = 6 does not match the 4 ranks launched");
  EXPECT_FALSE(RankGrid::create(4, 0, 4, 1).ok());
}

// DeepSpeed's expert groups: ep consecutive dp ranks; the ranks holding the same experts.
TEST(RankGrid, ExpertParallelGroupsSplitEachDataParallelGroup) {
  auto g = RankGrid::create(16, 2, 4, 2, 2);  // tp 2, dp 4, pp 2, ep 2
  ASSERT_TRUE(g.ok());
  // dp group of rank 0 is [0 2 4 6]: ep groups [0 2] [4 6], expert-data-parallel [0 4] [2 6].
  EXPECT_EQ(g->group_of(0, GridAxis::kEp), (std::vector<int>{0, 2}));
  EXPECT_EQ(g->group_of(4, GridAxis::kEp), (std::vector<int>{4, 6}));
  EXPECT_EQ(g->group_of(2, GridAxis::kEdp), (std::vector<int>{2, 6}));
  EXPECT_EQ(g->group_of(9, GridAxis::kEdp), (std::vector<int>{9, 13}));
  EXPECT_EQ(g->groups(GridAxis::kEp).size(), 8u);
  auto four = RankGrid::create(4, 1, 4, 1, 4);
  ASSERT_TRUE(four.ok());
  EXPECT_EQ(four->groups(GridAxis::kEp), (Groups{{0, 1, 2, 3}}));
  EXPECT_EQ(four->groups(GridAxis::kEdp), (Groups{{0}, {1}, {2}, {3}}));
  EXPECT_EQ(RankGrid::create(6, 1, 6, 1, 4).status().message(),
            "/parallel/ep (model.moe.ep_size): 4 must divide the data-parallel size 6 (expert-parallel groups are made of "
            "data-parallel ranks)");
}

// DeepSpeed-Ulysses' groups: sp consecutive dp ranks read the same sequences; the dp group
// (sequence-data-parallel) is unchanged; data_rank names which sequences a rank reads.
TEST(RankGrid, SequenceParallelGroupsSplitEachDataParallelGroup) {
  auto g = RankGrid::create(8, 1, 8, 1, 1, 4);
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(g->groups(GridAxis::kSp), (Groups{{0, 1, 2, 3}, {4, 5, 6, 7}}));
  EXPECT_EQ(g->groups(GridAxis::kDp), (Groups{{0, 1, 2, 3, 4, 5, 6, 7}}));
  EXPECT_EQ(g->data_parallel(), 2);
  EXPECT_EQ(g->data_rank(3), 0);
  EXPECT_EQ(g->data_rank(5), 1);
  auto two = RankGrid::create(8, 2, 4, 1, 1, 2);  // tp 2: sp groups step over the tp ranks
  ASSERT_TRUE(two.ok());
  EXPECT_EQ(two->group_of(1, GridAxis::kSp), (std::vector<int>{1, 3}));
  EXPECT_EQ(two->group_of(6, GridAxis::kSp), (std::vector<int>{4, 6}));
  EXPECT_EQ(RankGrid::create(6, 1, 6, 1, 1, 4).status().message(),
            "/sequence_parallel_size: 4 must divide the data-parallel size 6 (sequence-parallel groups are made of "
            "data-parallel ranks)");
  EXPECT_EQ(RankGrid::create(4, 1, 4, 1, 2, 2).status().code(), StatusCode::kUnimplemented);
}

// ZeRO++ hpZ: hpz consecutive dp ranks (one host's under mpirun's slot order).
TEST(RankGrid, HpzGroupsAreConsecutiveDataParallelRanks) {
  auto g = RankGrid::create(8, 1, 8, 1, 1, 1, 4);
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(g->groups(GridAxis::kHpz), (Groups{{0, 1, 2, 3}, {4, 5, 6, 7}}));
  auto tp = RankGrid::create(8, 2, 4, 1, 1, 1, 2);
  ASSERT_TRUE(tp.ok());
  EXPECT_EQ(tp->group_of(3, GridAxis::kHpz), (std::vector<int>{1, 3}));
  EXPECT_EQ(RankGrid::create(6, 1, 6, 1, 1, 1, 4).status().message(),
            "/zero_optimization/zero_hpz_partition_size: 4 must divide the data-parallel size 6");
}

}  // namespace
}  // namespace zt
