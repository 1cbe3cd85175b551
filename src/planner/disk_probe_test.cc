// The swap directory probe (disk_probe.h) on this machine's /tmp: it writes and passes
// over its two files in the chunks asked, reports positive rates with the geometry it
// used, leaves nothing behind, and names the directory when it cannot create it.
#include "planner/disk_probe.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "planner/swap_model.h"
#include "testing/temp_dir_test.h"

namespace zt {
namespace {

class DiskProbe : public zt::testing::TempDirTest {};

TEST_F(DiskProbe, MeasuresThePassAndLeavesNothing) {
  DiskProbeOptions o;
  o.bytes_per_array = size_t{8} << 20;
  o.chunks = 4;
  o.pin = false;
  auto d = probe_swap_disk(dir_ + "/swap", o);
  ASSERT_TRUE(d.ok()) << d.status().to_string();
  EXPECT_GT(d->write_bytes_per_s, 0.0);
  EXPECT_GT(d->mixed_bytes_per_s, 0.0);
  EXPECT_GT(d->checksum_bytes_per_s, 0.0);
  EXPECT_EQ(d->probe_chunks, 4u);
  EXPECT_EQ(d->probe_bytes_per_array, 8.0 * (1 << 20));
  EXPECT_FALSE(d->io.empty());
  const double pass = swap_pass_seconds(SwapPass{16.0 * (1 << 20), 16.0 * (1 << 20), 4}, 0.0, *d);
  EXPECT_TRUE(std::isfinite(pass) && pass > 0.0);
  EXPECT_TRUE(std::filesystem::is_empty(dir_ + "/swap"));  // the files were unlinked when opened
}

TEST_F(DiskProbe, NamesTheDirectoryItCannotUse) {
  std::ofstream(dir_ + "/file") << "x";
  auto d = probe_swap_disk(dir_ + "/file/swap", DiskProbeOptions{});
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.status().message().find("measuring swap directory " + dir_ + "/file/swap"), std::string::npos)
      << d.status().message();
}

}  // namespace
}  // namespace zt
