// The NCCL process group (issue 29): at world 1, every collective on device memory and on
// host scalars leaves the data as it was and completes, the grouped path of unequal
// segments too (forced); NCCL at world 1 only copies, so these check the calls, their
// non-blocking settling and the stream order, not the sums. An operation not yet waited
// when the communicator is aborted fails. Statistics time each operation on the NCCL
// stream. send/recv are refused with the reason. At world 2
// (two thread-ranks on the one GPU), only where NCCL allows two ranks on one GPU (2.30 and
// later, NCCL_MULTI_RANK_GPU_ENABLE=1): sums, unequal reduce-scatter and all-gather
// segments (ZeRO's shorter last shard) and broadcast, on integers, exact.
#include "backend/cuda/nccl_process_group.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <vector>

#include "backend/backend.h"
#include "comm/thread_world.h"
#include "testing/cuda_test.h"

namespace zt {
namespace {

#define ZT_REQUIRE_NCCL()                                                                              \
  do {                                                                                                 \
    ZT_REQUIRE_CUDA();                                                                                 \
    if (cuda::loaded_nccl_version() == 0) GTEST_SKIP() << "libnccl.so.2 is not loadable here";         \
  } while (0)

// A hang costs the GPU session's minutes: every test's deadline is one minute.
CommOptions quick() {
  CommOptions o;
  o.timeout_s = 60.0;
  return o;
}

// A communicator of this process alone (the host group only carries the id).
StatusOr<std::unique_ptr<ProcessGroup>> at_world_one(const cuda::NcclOptions& nccl = {}) {
  auto host = make_single_process_group();
  return cuda::make_nccl_process_group(*host, quick(), nccl);
}

struct OnGpu {
  OnGpu() : b(*backend_for(Device::kCuda, DType::kF32).value()) {}
  Arena put(const std::vector<float>& v) {
    Arena a = b.allocate(v.size(), DType::kF32, "test").value();
    b.copy_from_host(a.data(), v.data(), v.size() * sizeof(float));
    return a;
  }
  std::vector<float> get(const Arena& a) const {
    std::vector<float> v(a.size());
    b.copy_to_host(v.data(), a.data(), v.size() * sizeof(float));
    return v;
  }
  const Backend& b;
};

TEST(Nccl, AtWorldOneEveryCollectiveLeavesTheDataAsItWas) {
  ZT_REQUIRE_NCCL();
  OnGpu gpu;
  auto g = at_world_one();
  ASSERT_TRUE(g.ok()) << g.status().to_string();
  ProcessGroup& nccl = *g.value();
  const std::vector<float> v = {1.5f, -2.0f, 3.25f, 7.0f, 0.0f};
  Arena a = gpu.put(v);
  ASSERT_TRUE(nccl.all_reduce(a.data(), v.size(), CommDType::kF32)->wait().ok());
  ASSERT_TRUE(nccl.reduce_scatter(a.data(), {v.size()})->wait().ok());
  ASSERT_TRUE(nccl.all_gather(a.data(), {v.size()})->wait().ok());
  ASSERT_TRUE(nccl.broadcast(a.data(), v.size() * sizeof(float), 0)->wait().ok());
  ASSERT_TRUE(nccl.barrier()->wait().ok());
  EXPECT_EQ(gpu.get(a), v);
  double scalar = 2.5;  // host memory: through device scratch
  ASSERT_TRUE(nccl.all_reduce(&scalar, 1, CommDType::kF64)->wait().ok());
  EXPECT_EQ(scalar, 2.5);
  EXPECT_EQ(nccl.stats().of(CommOp::kAllReduce).calls, 2);
  const Status s = nccl.send(a.data(), 4, 0, 1)->wait();
  EXPECT_EQ(s.code(), StatusCode::kUnimplemented);
  EXPECT_NE(s.message().find("tags"), std::string::npos) << s.message();
}

// The grouped path of unequal segments (ncclGroupStart, per-owner ncclReduce or
// ncclBroadcast, ncclGroupEnd settled in non-blocking mode), forced at world 1.
TEST(Nccl, AtWorldOneTheGroupedSegmentPathLeavesTheDataAsItWas) {
  ZT_REQUIRE_NCCL();
  OnGpu gpu;
  cuda::NcclOptions grouped;
  grouped.always_grouped = true;
  auto g = at_world_one(grouped);
  ASSERT_TRUE(g.ok()) << g.status().to_string();
  const std::vector<float> v = {0.5f, -4.0f, 9.75f};
  Arena a = gpu.put(v);
  ASSERT_TRUE(g.value()->reduce_scatter(a.data(), {v.size()})->wait().ok());
  ASSERT_TRUE(g.value()->all_gather(a.data(), {v.size()})->wait().ok());
  EXPECT_EQ(gpu.get(a), v);
}

// The statistics the comms logger and the run report print: each operation's calls and
// seconds by payload size, the time the group was busy (the NCCL stream's) and the time the
// caller was blocked in wait(), hence a hidden fraction in [0, 1].
TEST(Nccl, StatisticsCountTheStreamTimeAndTheWait) {
  ZT_REQUIRE_NCCL();
  OnGpu gpu;
  auto g = at_world_one();
  ASSERT_TRUE(g.ok()) << g.status().to_string();
  Arena a = gpu.put(std::vector<float>(size_t{1} << 20, 1.0f));
  for (int i = 0; i < 2; ++i) ASSERT_TRUE(g.value()->all_reduce(a.data(), a.size(), CommDType::kF32)->wait().ok());
  const CommStats s = g.value()->stats();
  const CommSizeStats& sized = s.by_size.at({CommOp::kAllReduce, int64_t{4} << 20});
  EXPECT_EQ(sized.calls, 2);
  EXPECT_GE(sized.seconds, 0.0);  // (at world 1 NCCL may queue no work for an in-place sum)
  EXPECT_DOUBLE_EQ(s.of(CommOp::kAllReduce).seconds, sized.seconds);
  EXPECT_DOUBLE_EQ(s.busy_seconds, sized.seconds);
  EXPECT_GE(s.exposed_seconds, 0.0);
  EXPECT_GE(s.hidden_fraction(), 0.0);
  EXPECT_LE(s.hidden_fraction(), 1.0);
  g.value()->reset_stats();
  EXPECT_TRUE(g.value()->stats().by_size.empty());
}

TEST(Nccl, AnOperationNotYetWaitedFailsOnceTheCommunicatorIsAborted) {
  ZT_REQUIRE_NCCL();
  OnGpu gpu;
  auto g = at_world_one();
  ASSERT_TRUE(g.ok()) << g.status().to_string();
  Arena a = gpu.put(std::vector<float>(1 << 20, 1.0f));
  WorkHandle w = g.value()->all_reduce(a.data(), a.size(), CommDType::kF32);
  g.value()->abandon(Status::Internal("a peer failed"));
  EXPECT_TRUE(w->completed());
  const Status s = w->wait();
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition) << s.to_string();
  EXPECT_NE(s.message().find("aborted"), std::string::npos) << s.message();
  EXPECT_FALSE(g.value()->barrier()->wait().ok());
}

TEST(Nccl, TwoRanksOnOneGpuSumAndGatherUnequalSegments) {
  ZT_REQUIRE_NCCL();
  if (cuda::loaded_nccl_version() < 23000) {
    GTEST_SKIP() << "NCCL " << cuda::loaded_nccl_version() << " refuses two ranks on one GPU (2.30 allows them "
                 << "with NCCL_MULTI_RANK_GPU_ENABLE=1); the host-staged path covers several ranks on one GPU";
  }
  setenv("NCCL_MULTI_RANK_GPU_ENABLE", "1", 1);
  OnGpu gpu;
  ThreadWorld world(2, quick());
  const Status st = run_ranks(2, [&](int rank) -> Status {
    auto host = world.group(rank);
    ZT_ASSIGN_OR_RETURN(auto nccl, cuda::make_nccl_process_group(*host, quick()));
    Arena a = gpu.put({1.0f + rank, 2.0f + rank, 3.0f + rank});
    ZT_RETURN_IF_ERROR(nccl->reduce_scatter(a.data(), {2, 1})->wait());
    const std::vector<float> rs = gpu.get(a);
    if (rank == 0) EXPECT_EQ((std::vector<float>{rs[0], rs[1]}), (std::vector<float>{3, 5}));
    if (rank == 1) EXPECT_EQ(rs[2], 7.0f);
    Arena b = gpu.put(rank == 0 ? std::vector<float>{10, 11, -1} : std::vector<float>{-1, -1, 12});
    ZT_RETURN_IF_ERROR(nccl->all_gather(b.data(), {2, 1})->wait());
    EXPECT_EQ(gpu.get(b), (std::vector<float>{10, 11, 12}));
    Arena c = gpu.put({static_cast<float>(rank)});
    ZT_RETURN_IF_ERROR(nccl->broadcast(c.data(), sizeof(float), 1)->wait());
    EXPECT_EQ(gpu.get(c), std::vector<float>{1});
    return Status::OK();
  });
  EXPECT_TRUE(st.ok()) << st.to_string();
}

}  // namespace
}  // namespace zt
