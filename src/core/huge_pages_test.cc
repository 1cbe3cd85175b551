// Huge-page advice: the THP mode line's parsing, the size threshold, and that an advised
// block's mapping becomes huge-page eligible (/proc/self/smaps) where the kernel's mode is
// "madvise" (under "always" every block is; under "never" none can be: skipped, named).
#include "core/huge_pages.h"

#include <gtest/gtest.h>
#include <sys/mman.h>

#include "testing/smaps.h"

namespace zt {
namespace {

TEST(HugePages, ParsesTheBracketedMode) {
  EXPECT_EQ(parse_thp_mode("always [madvise] never"), "madvise");
  EXPECT_EQ(parse_thp_mode("[always] madvise never"), "always");
  EXPECT_EQ(parse_thp_mode("always madvise [never]"), "never");
  EXPECT_EQ(parse_thp_mode("always madvise never"), "unavailable");
  EXPECT_EQ(parse_thp_mode(""), "unavailable");
}

TEST(HugePages, DescribesTheSlowModes) {
  bool slow = false;
  const std::string text = describe_thp(&slow);
  const std::string mode = thp_mode();
  EXPECT_EQ(text.rfind(mode, 0), 0u) << text;
  EXPECT_EQ(slow, mode != "always" && mode != "madvise") << text;
  for (const char* m : {"never", "unavailable"}) {
    const std::string named = describe_thp_mode(m, &slow);
    EXPECT_TRUE(slow) << m;
    EXPECT_NE(named.find("4 KiB pages only"), std::string::npos) << named;
    EXPECT_NE(named.find("echo madvise > /sys/kernel/mm/transparent_hugepage/enabled"), std::string::npos) << named;
  }
  EXPECT_NE(describe_thp_mode("madvise", &slow).find("advises its blocks"), std::string::npos);
  EXPECT_FALSE(slow);
}

// An mmap'd block, so that its mapping is its own and its THP flag is the advice's alone.
struct Mapping {
  explicit Mapping(size_t n) : bytes(n) {
    p = mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  }
  ~Mapping() { munmap(p, bytes); }
  char* at(size_t off) const { return static_cast<char*>(p) + off; }
  void* p;
  size_t bytes;
};

TEST(HugePages, AdvisesTheAlignedInteriorOfLargeBlocksOnly) {
  if (thp_mode() != "madvise") GTEST_SKIP() << "THP mode is " << thp_mode() << ", not madvise: advice changes nothing";
  Mapping small(kHugePageAdviceMinBytes - 4096), large(kHugePageAdviceMinBytes + (size_t{4} << 20));
  ASSERT_NE(small.p, MAP_FAILED);
  ASSERT_NE(large.p, MAP_FAILED);
  EXPECT_FALSE(advise_huge_pages(small.p, small.bytes));
  EXPECT_EQ(testing::thp_eligible(small.p), 0);
  EXPECT_FALSE(advise_huge_pages(nullptr, large.bytes));
  ASSERT_EQ(testing::thp_eligible(large.at(large.bytes / 2)), 0);
  ASSERT_TRUE(advise_huge_pages(large.at(4096), large.bytes - 4096));
  EXPECT_EQ(testing::thp_eligible(large.at(large.bytes / 2)), 1);
  EXPECT_EQ(testing::thp_eligible(large.p), 0) << "the unaligned head stays 4 KiB pages";
}

}  // namespace
}  // namespace zt
