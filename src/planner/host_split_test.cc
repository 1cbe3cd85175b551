// The splits of a host's cores (one rank for the whole host, or ranks that divide evenly
// among the sockets), the shape's argument errors, and the mpirun binding: by socket where
// every host runs the same ranks per socket, by slot otherwise, refused past the cores.
#include "planner/host_split.h"

#include <gtest/gtest.h>

namespace zt {
namespace {

std::string splits(int sockets, int cores) {
  std::string s;
  for (const HostSplit& p : host_splits(host_shape(sockets, cores).value())) {
    s += (s.empty() ? "" : ",") + std::to_string(p.ranks) + "x" + std::to_string(p.threads);
  }
  return s;
}

TEST(HostSplit, EveryEvenSplitOfTheCores) {
  EXPECT_EQ(splits(1, 2), "1x2,2x1");
  EXPECT_EQ(splits(1, 16), "1x16,2x8,4x4,8x2,16x1");
  EXPECT_EQ(splits(1, 12), "1x12,2x6,3x4,4x3,6x2,12x1");
  // Two sockets of 8: three ranks would straddle a socket, one rank spans both.
  EXPECT_EQ(splits(2, 16), "1x16,2x8,4x4,8x2,16x1");
  // Two sockets of 6: 4 ranks of 3 fit (2 per socket), 6 x 2 too; 3 x 4 would straddle.
  EXPECT_EQ(splits(2, 12), "1x12,2x6,4x3,6x2,12x1");
  EXPECT_EQ(HostSplit({4, 1}).describe(), "4 ranks x 1 thread");
  EXPECT_EQ(HostShape({2, 16}).describe(), "2 sockets, 16 cores");
}

TEST(HostSplit, ShapeErrorsNameTheFlags) {
  for (auto [s, c] : {std::pair{0, 4}, std::pair{3, 2}, std::pair{2, 5}}) {
    auto h = host_shape(s, c);
    ASSERT_FALSE(h.ok());
    EXPECT_NE(h.status().message().find("--sockets-per-host"), std::string::npos) << h.status().message();
  }
  const HostShape here = this_host_shape();
  EXPECT_GE(here.cores, here.sockets);
  EXPECT_EQ(here.cores % here.sockets, 0);
}

TEST(HostSplit, BindingBySocketOrSlot) {
  const HostShape two{2, 16};
  auto b = mpirun_binding(two, 4, 4, true);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(*b, (std::vector<std::string>{"--map-by", "ppr:2:socket:PE=4", "--bind-to", "core"}));
  // One rank over both sockets, hosts with different rank counts, one socket: by slot.
  EXPECT_EQ(mpirun_binding(two, 1, 16, true).value()[1], "slot:PE=16");
  EXPECT_EQ(mpirun_binding(two, 4, 4, false).value()[1], "slot:PE=4");
  EXPECT_EQ(mpirun_binding(HostShape{1, 2}, 2, 1, true).value()[1], "slot:PE=1");
  auto over = mpirun_binding(HostShape{1, 2}, 2, 2, true);
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.status().message(), "2 ranks x 2 threads need 4 cores; the host has 1 socket, 2 cores");
}

}  // namespace
}  // namespace zt
