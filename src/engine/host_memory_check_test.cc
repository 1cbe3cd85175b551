// The host-memory verdict: within what is available (or where that is unknown) a run goes
// ahead; beyond it, ResourceExhausted names the ranks, the bytes a rank and the host would
// hold, what is available, and the ways out (different for offload's host part).
#include "engine/host_memory_check.h"

#include <gtest/gtest.h>

#include <cstdlib>

namespace zt {
namespace {

constexpr size_t kGiB = size_t{1} << 30;

TEST(HostMemoryCheck, RefusesOnlyWhatTheHostCannotHold) {
  EXPECT_TRUE(host_memory_verdict(10 * kGiB, 2, 20 * kGiB, false).ok());
  EXPECT_TRUE(host_memory_verdict(100 * kGiB, 4, 0, false).ok());  // unknown: not judged
  const Status cpu = host_memory_verdict(10 * kGiB, 2, 19 * kGiB, false);
  EXPECT_EQ(cpu.code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(cpu.message(),
            "host memory: this host's 2 rank(s) would hold about 20.00 GiB (the model states, activations and buffers: "
            "10.00 GiB a rank, by the estimate) and 19.00 GiB is available; use a higher ZeRO stage over more ranks or "
            "hosts, offload the optimizer state to NVMe, activation checkpointing or a smaller micro-batch; `zerotrain "
            "estimate` shows where the bytes go");
  const Status gpu = host_memory_verdict(76 * kGiB, 1, 60 * kGiB, true);
  EXPECT_NE(gpu.message().find("(offload's host part: 76.00 GiB a rank"), std::string::npos) << gpu.message();
  EXPECT_NE(gpu.message().find("offload_optimizer.device \"nvme\""), std::string::npos) << gpu.message();
}

TEST(HostMemoryCheck, CountsTheRanksTheLauncherPutOnThisHost) {
  unsetenv("OMPI_COMM_WORLD_LOCAL_SIZE");
  unsetenv("SLURM_NTASKS_PER_NODE");
  unsetenv("LOCAL_WORLD_SIZE");
  EXPECT_EQ(ranks_on_this_host(), 1);
  setenv("LOCAL_WORLD_SIZE", "4", 1);
  EXPECT_EQ(ranks_on_this_host(), 4);
  setenv("OMPI_COMM_WORLD_LOCAL_SIZE", "3", 1);
  EXPECT_EQ(ranks_on_this_host(), 3);
  unsetenv("OMPI_COMM_WORLD_LOCAL_SIZE");
  unsetenv("LOCAL_WORLD_SIZE");
}

}  // namespace
}  // namespace zt
