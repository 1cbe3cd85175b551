// The ring's segment split for all_reduce (the ring itself runs under mpirun in
// tests/comm/comm_mpi_test.cc, through zt_comm_driver).
#include <gtest/gtest.h>

#include <numeric>

#include "comm/ring.h"

namespace zt {
namespace {

TEST(Ring, EvenCountsSplitNearEquallyWithTheRemainderFirst) {
  EXPECT_EQ(ring_even_counts(10, 4), (std::vector<size_t>{3, 3, 2, 2}));
  EXPECT_EQ(ring_even_counts(2, 4), (std::vector<size_t>{1, 1, 0, 0}));
  EXPECT_EQ(ring_even_counts(0, 3), (std::vector<size_t>{0, 0, 0}));
  EXPECT_EQ(ring_even_counts(7, 1), (std::vector<size_t>{7}));
  for (size_t count : {size_t{1}, size_t{1000003}, size_t{1} << 26}) {
    for (int n : {2, 3, 8}) {
      const std::vector<size_t> c = ring_even_counts(count, n);
      EXPECT_EQ(std::accumulate(c.begin(), c.end(), size_t{0}), count);
      EXPECT_LE(c.front() - c.back(), 1u);
    }
  }
}

}  // namespace
}  // namespace zt
