// The resident peak that restarts (memory_stats.h): a block touched and unmapped raises
// the peak above the current size by its bytes; after reset_resident_peak() the peak is
// the current size again, and never below it. This is how calibrate measures a kernel
// call's workspace (planner/op_timer.h).
#include "core/memory_stats.h"

#include <sys/mman.h>

#include <cstring>

#include <gtest/gtest.h>

namespace zt {
namespace {

constexpr size_t kBlock = size_t{64} << 20;

// Maps, touches and unmaps kBlock bytes: resident for a moment, then given back.
void touch_and_release() {
  void* p = mmap(nullptr, kBlock, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(p, MAP_FAILED);
  std::memset(p, 1, kBlock);
  ASSERT_EQ(munmap(p, kBlock), 0);
}

TEST(MemoryStats, TheResidentPeakRestartsAndSeesATransientBlock) {
  if (!reset_resident_peak()) GTEST_SKIP() << "this kernel cannot reset the resident peak (/proc/self/clear_refs)";
  const size_t before = current_rss_bytes();
  ASSERT_GT(before, 0u);
  touch_and_release();
  const size_t peak = resident_peak_bytes();
  EXPECT_GE(peak, before + kBlock - (size_t{4} << 20)) << "the 64 MiB block is missing from the peak";
  EXPECT_GE(peak_rss_bytes(), peak);  // the process's peak since start never restarts
  ASSERT_TRUE(reset_resident_peak());
  const size_t again = resident_peak_bytes();
  EXPECT_LT(again, peak - kBlock / 2) << "the peak did not restart";
  EXPECT_GE(again + (size_t{1} << 20), current_rss_bytes());
}

}  // namespace
}  // namespace zt
