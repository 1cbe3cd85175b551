// Host-staged process groups on the guarded backend with its memory domain hidden (a GPU's
// memory as far as the groups know): every operation gives the host group's result on
// host buffers, its results land in backend memory at wait(), host buffers pass through,
// and which groups need staging. A host group touching guarded memory would fault.
#include "backend/staged_process_group.h"

#include <gtest/gtest.h>

#include <cstring>
#include <numeric>
#include <vector>

#include "backend/cpu/guarded_backend.h"
#include "comm/thread_world.h"
#include "testing/delegating_backend.h"

namespace zt {
namespace {

struct GpuLike {
  GpuLike() : b(guarded_cpu_backend(DType::kF32), plain_cpu_backend(DType::kF32)) { b.hide_memory_domain(); }
  Arena put(const std::vector<float>& v) {
    Arena a = b.allocate(v.size(), DType::kF32, "test").value();
    b.copy_from_host(a.data(), v.data(), v.size() * sizeof(float));
    return a;
  }
  std::vector<float> get(const Arena& a) {
    std::vector<float> v(a.size());
    b.copy_to_host(v.data(), a.data(), v.size() * sizeof(float));
    return v;
  }
  testing::DelegatingBackend b;
};

// rank r's values: r * 100 + i.
std::vector<float> values(int r, size_t n) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<float>(r * 100 + static_cast<int>(i));
  return v;
}

// fn(rank, the staged group, the device) on N thread-ranks.
void on_ranks(int N, const std::function<void(int, ProcessGroup&, GpuLike&)>& fn) {
  ThreadWorld world(N, CommOptions{});
  GpuLike dev;
  const Status s = run_ranks(N, [&](int rank) -> Status {
    auto host = world.group(rank);
    EXPECT_TRUE(needs_host_staging(*host, dev.b));
    auto g = make_staged_process_group(*host, dev.b);
    fn(rank, *g, dev);
    return Status::OK();
  });
  ASSERT_TRUE(s.ok()) << s.to_string();
}

TEST(StagedProcessGroup, CollectivesGiveTheHostGroupsResults) {
  const int N = 3;
  const std::vector<size_t> counts = {2, 0, 3};
  on_ranks(N, [&](int rank, ProcessGroup& g, GpuLike& dev) {
    Arena sum = dev.put(values(rank, 5));
    ASSERT_TRUE(g.all_reduce(sum.data(), 5, CommDType::kF32)->wait().ok());
    for (size_t i = 0; i < 5; ++i) EXPECT_EQ(dev.get(sum)[i], 300.0f + 3 * i);
    Arena rs = dev.put(values(rank, 5));
    ASSERT_TRUE(g.reduce_scatter(rs.data(), counts)->wait().ok());
    const size_t at = rank == 0 ? 0 : 2;
    for (size_t i = 0; i < counts[static_cast<size_t>(rank)]; ++i) EXPECT_EQ(dev.get(rs)[at + i], 300.0f + 3 * (at + i));
    std::vector<float> mine(5, -1.0f);
    for (size_t i = 0; i < counts[static_cast<size_t>(rank)]; ++i) mine[at + i] = static_cast<float>(rank);
    Arena ag = dev.put(mine);
    ASSERT_TRUE(g.all_gather(ag.data(), counts)->wait().ok());
    EXPECT_EQ(dev.get(ag), (std::vector<float>{0, 0, 2, 2, 2}));
    Arena bc = dev.put(values(rank, 4));
    ASSERT_TRUE(g.broadcast(bc.data(), 4 * sizeof(float), 2)->wait().ok());
    EXPECT_EQ(dev.get(bc), values(2, 4));
    double scalar = rank + 1.0;  // host memory goes to the host group unchanged
    ASSERT_TRUE(g.all_reduce(&scalar, 1, CommDType::kF64)->wait().ok());
    EXPECT_EQ(scalar, 6.0);
  });
}

TEST(StagedProcessGroup, PointToPointAndAllToAllCrossEachSideThatIsDeviceMemory) {
  on_ranks(2, [&](int rank, ProcessGroup& g, GpuLike& dev) {
    Arena buf = dev.put(values(rank, 4));
    WorkHandle w = rank == 0 ? g.send(buf.data(), 16, 1, 7) : g.recv(buf.data(), 16, 0, 7);
    ASSERT_TRUE(w->wait().ok());
    EXPECT_EQ(dev.get(buf), values(0, 4));
    // Rank r sends r+1 floats to each peer; device send, host receive and the reverse.
    const size_t k = static_cast<size_t>(rank) + 1;
    std::vector<float> send_host(2 * k, static_cast<float>(rank));
    Arena send_dev = dev.put(send_host);
    const std::vector<size_t> sb(2, k * 4), rb = {4, 8};
    std::vector<float> recv_host(3, -1.0f);
    ASSERT_TRUE(g.all_to_all(send_dev.data(), sb, recv_host.data(), rb)->wait().ok());
    EXPECT_EQ(recv_host, (std::vector<float>{0, 1, 1}));
    Arena recv_dev = dev.put(std::vector<float>(3, -1.0f));
    ASSERT_TRUE(g.all_to_all(send_host.data(), sb, recv_dev.data(), rb)->wait().ok());
    EXPECT_EQ(dev.get(recv_dev), (std::vector<float>{0, 1, 1}));
  });
}

TEST(StagedProcessGroup, ResultsReachBackendMemoryAtWait) {
  on_ranks(2, [&](int rank, ProcessGroup& g, GpuLike& dev) {
    Arena a = dev.put(values(rank, 3));
    WorkHandle w = g.all_reduce(a.data(), 3, CommDType::kF32);
    while (!w->completed()) {
    }
    EXPECT_EQ(dev.get(a), values(rank, 3));  // the sum is still on the host
    ASSERT_TRUE(w->wait().ok());
    EXPECT_EQ(dev.get(a), (std::vector<float>{100, 102, 104}));
  });
}

// A staging buffer that cannot be pinned fails the operation naming why, and gives up the
// host group's pending work (a thread group withdraws it; an MPI one ends the job).
TEST(StagedProcessGroup, AnUnpinnableStagingBufferFailsNamingWhyAndAbandonsTheHostGroup) {
  CommOptions quick;
  quick.timeout_s = 5;  // without the abandon, the pending receive would end at this deadline
  ThreadWorld world(2, quick);
  auto host = world.group(0);
  testing::UnpinnableHost unpinnable(plain_cpu_backend(DType::kF32));
  testing::DelegatingBackend dev(guarded_cpu_backend(DType::kF32), unpinnable);
  dev.hide_memory_domain();
  Arena a = dev.allocate(4, DType::kF32, "test").value();
  float got = 0.0f;
  WorkHandle pending = host->recv(&got, sizeof(got), 1, 7);  // rank 1 never sends
  auto g = make_staged_process_group(*host, dev);
  const Status s = g->all_reduce(a.data(), 4, CommDType::kF32)->wait();
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted) << s.to_string();
  EXPECT_NE(s.message().find("cannot pin"), std::string::npos) << s.message();
  const Status p = pending->wait();
  EXPECT_FALSE(p.ok());
  EXPECT_NE(p.message().find("cannot pin"), std::string::npos) << p.message();
}

TEST(StagedProcessGroup, OnlyGroupsThatCannotReachTheBackendsMemoryStage) {
  ThreadWorld world(2, CommOptions{});
  auto thread_group = world.group(0);
  auto single = make_single_process_group();
  testing::DelegatingBackend with_domain(guarded_cpu_backend(DType::kF32), plain_cpu_backend(DType::kF32));
  GpuLike gpu_like;
  EXPECT_FALSE(needs_host_staging(*thread_group, plain_cpu_backend(DType::kF32)));  // host memory
  EXPECT_FALSE(needs_host_staging(*thread_group, with_domain));  // works inside the domain
  EXPECT_TRUE(needs_host_staging(*thread_group, gpu_like.b));    // no domain: a GPU's memory
  EXPECT_FALSE(needs_host_staging(*single, gpu_like.b));         // its collectives move no bytes
  ThreadWorld alone(1, CommOptions{});
  EXPECT_TRUE(needs_host_staging(*alone.group(0), gpu_like.b));  // a group of one thread still copies
  StagedGroups groups(gpu_like.b);
  EXPECT_EQ(groups.wrap(single.get()), single.get());
  ProcessGroup* s = groups.wrap(thread_group.get());
  EXPECT_NE(s, thread_group.get());
  EXPECT_EQ(groups.wrap(thread_group.get()), s);  // one staged group per host group
  EXPECT_EQ(groups.wrap(nullptr), nullptr);
  // Its stats are the host group's: a sum over both (the run's exposed communication) counts them once.
  EXPECT_EQ(s->stats_owner(), thread_group.get());
  EXPECT_EQ(thread_group->stats_owner(), thread_group.get());
}

}  // namespace
}  // namespace zt
