// NVMe offload's optimizer pass priced (swap_model.h): one chunk is its read, its update
// with the checksums and its write in series; many chunks run at the slower of the disk
// and the thread, plus one chunk's read before and one chunk's write after; the pass of
// a rank's options is its memory estimate's, and a directory never measured, or disk
// traffic during forward and backward, is refused with what to run or why.
#include "planner/swap_model.h"

#include <gtest/gtest.h>

#include "testing/temp_dir_test.h"

namespace zt {
namespace {

DiskCalibration disk() {
  DiskCalibration d;
  d.write_bytes_per_s = 1e9;
  d.mixed_bytes_per_s = 2e9;
  d.checksum_bytes_per_s = 10e9;
  return d;
}

TEST(SwapModel, OneChunkIsReadUpdateAndWriteInSeries) {
  const SwapPass p{4e9, 4e9, 1};
  // read 4e9 at 2e9 (2 s) + update 1 s + checksums of 8e9 at 10e9 (0.8 s) + write 4e9 at 1e9 (4 s)
  EXPECT_NEAR(swap_pass_seconds(p, 1.0, disk()), 2.0 + 1.0 + 0.8 + 4.0, 1e-12);
  EXPECT_NEAR(swap_disk_seconds(p, disk()), 4.0, 1e-12);
}

TEST(SwapModel, ManyChunksRunAtTheSlowerOfTheDiskAndTheThread) {
  const SwapPass p{4e9, 4e9, 100};
  const double per_chunk_disk = 8e9 / 100 / 2e9, first = 4e9 / 100 / 2e9, last = 4e9 / 100 / 1e9;
  const double fast_thread = 0.5 / 100 + 8e9 / 100 / 10e9;  // below the disk's chunk: the disk sets the pace
  EXPECT_NEAR(swap_pass_seconds(p, 0.5, disk()), first + 99 * per_chunk_disk + fast_thread + last, 1e-12);
  const double slow_thread = 10.0 / 100 + 8e9 / 100 / 10e9;  // a 10 s update: the thread sets it
  EXPECT_NEAR(swap_pass_seconds(p, 10.0, disk()), first + 100 * slow_thread + last, 1e-12);
  EXPECT_LT(swap_pass_seconds(p, 0.5, disk()), swap_pass_seconds(SwapPass{4e9, 4e9, 1}, 0.5, disk()));
}

class SwapPricing : public zt::testing::TempDirTest {
 protected:
  TrainerOptions options() const {
    TrainerOptions o;
    o.model.n_layer = 2;
    o.model.n_embd = 64;
    o.model.n_head = 4;
    o.model.vocab_size = 100;
    o.model.n_positions = 16;
    o.micro_batch = 2;
    o.seq_len = 16;
    o.checkpoint.assign(2, false);
    o.zero.offload.optimizer_device = OffloadDevice::kNvme;
    o.zero.offload.optimizer_path = dir_ + "/swap";
    o.zero.offload.sub_group_size = 32768;
    return o;
  }
};

TEST_F(SwapPricing, ARanksPassIsItsMemoryEstimatesPass) {
  const TrainerOptions o = options();
  auto m = estimate_rank_memory(o, 1, 0, 1, 0);
  ASSERT_TRUE(m.ok()) << m.status().to_string();
  ASSERT_GT(m->swap_chunks, 1u);
  EXPECT_EQ(m->swap_pass_read, m->disk_read_per_step);
  Calibration cal;
  cal.disks[disk_key(dir_ + "/swap")] = disk();
  double disk_s = 0.0;
  auto t = price_swap_pass(o, 1, 0, 1, 0, 0.25, cal, &disk_s);
  ASSERT_TRUE(t.ok()) << t.status().to_string();
  const SwapPass p{static_cast<double>(m->swap_pass_read), static_cast<double>(m->swap_pass_write), m->swap_chunks};
  EXPECT_EQ(*t, swap_pass_seconds(p, 0.25, disk()));
  EXPECT_EQ(disk_s, swap_disk_seconds(p, disk()));
  cal.disks.clear();
  cal.disks[disk_key(dir_ + "/other")] = disk();
  const Status s = price_swap_pass(o, 1, 0, 1, 0, 0.25, cal, &disk_s).status();
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("run `zerotrain calibrate --nvme-path " + dir_ + "/swap`"), std::string::npos) << s.message();
}

TEST_F(SwapPricing, DiskTrafficDuringForwardAndBackwardIsNotPriced) {
  TrainerOptions o = options();
  o.zero.stage = ZeroStage::kParameters;
  o.zero.offload.param_device = OffloadDevice::kNvme;
  o.zero.offload.param_path = o.zero.offload.optimizer_path;
  o.zero.offload.max_in_cpu = 0;
  o.zero.fetch.persistence_threshold = 0;
  Calibration cal;
  cal.disks[disk_key(dir_ + "/swap")] = disk();
  double disk_s = 0.0;
  const Status s = price_swap_pass(o, 1, 0, 1, 0, 0.25, cal, &disk_s).status();
  EXPECT_EQ(s.code(), StatusCode::kUnimplemented);
  EXPECT_NE(s.message().find("offload_param or cpu_checkpointing on NVMe"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace zt
