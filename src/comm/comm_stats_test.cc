// CommStats counting (calls, logical bytes per the ZeRO convention, busy >= exposed,
// hidden fraction), the single-process group, names and sizes, and the deadline: a
// rank that never joins makes its peers' Works fail with DeadlineExceeded, in time, with
// the message naming rank, step, operation, sequence number and bytes.
#include <gtest/gtest.h>

#include <chrono>
#include <numeric>
#include <regex>
#include <thread>

#include "comm/comm_engine.h"
#include "comm/thread_world.h"
#include "core/timer.h"

namespace zt {
namespace {

TEST(CommStats, NamesSizesAndDerivedFigures) {
  EXPECT_STREQ(comm_op_name(CommOp::kAllReduce), "all_reduce");
  EXPECT_STREQ(comm_op_name(CommOp::kReduceScatter), "reduce_scatter");
  EXPECT_STREQ(comm_op_name(CommOp::kAllGather), "all_gather");
  EXPECT_STREQ(comm_op_name(CommOp::kBroadcast), "broadcast");
  EXPECT_STREQ(comm_op_name(CommOp::kSend), "send");
  EXPECT_STREQ(comm_op_name(CommOp::kRecv), "recv");
  EXPECT_STREQ(comm_op_name(CommOp::kBarrier), "barrier");
  EXPECT_EQ(comm_dtype_size(CommDType::kF32), 4u);
  EXPECT_EQ(comm_dtype_size(CommDType::kF64), 8u);
  EXPECT_EQ(comm_dtype_size(CommDType::kI64), 8u);
  CommStats s;
  EXPECT_EQ(s.hidden_fraction(), 0.0);
  s.busy_seconds = 4.0;
  s.exposed_seconds = 1.0;
  EXPECT_DOUBLE_EQ(s.hidden_fraction(), 0.75);
  s.ops[0].logical_bytes = 10;
  s.ops[3].logical_bytes = 5;
  EXPECT_EQ(s.total_logical_bytes(), 15);
  EXPECT_EQ(format_bytes(12), "12 B");
  EXPECT_EQ(format_bytes(1536), "1.50 KiB");
  EXPECT_EQ(format_bytes(16 << 20), "16.00 MiB");
}

TEST(CommStats, SingleProcessGroupCompletesAtOnceAndCounts) {
  auto g = make_single_process_group();
  EXPECT_EQ(g->rank(), 0);
  EXPECT_EQ(g->size(), 1);
  EXPECT_STREQ(g->backend_name(), "single");
  std::vector<float> x = {1.5f, -2.0f, 3.0f};
  auto w = g->all_reduce(x.data(), x.size(), CommDType::kF32);
  EXPECT_TRUE(w->completed());
  EXPECT_TRUE(w->wait().ok());
  EXPECT_EQ(x, (std::vector<float>{1.5f, -2.0f, 3.0f}));
  EXPECT_TRUE(g->reduce_scatter(x.data(), {3})->wait().ok());
  EXPECT_TRUE(g->all_gather(x.data(), {3})->wait().ok());
  EXPECT_TRUE(g->broadcast(x.data(), 12, 0)->wait().ok());
  EXPECT_TRUE(g->barrier()->wait().ok());
  EXPECT_EQ(g->send(x.data(), 4, 0, 0)->wait().code(), StatusCode::kInvalidArgument);
  const CommStats s = g->stats();
  EXPECT_EQ(s.of(CommOp::kAllReduce).calls, 1);
  EXPECT_EQ(s.of(CommOp::kAllReduce).logical_bytes, 24);
  EXPECT_EQ(s.of(CommOp::kReduceScatter).logical_bytes, 12);
  EXPECT_EQ(s.of(CommOp::kBroadcast).logical_bytes, 12);
  EXPECT_EQ(s.of(CommOp::kBarrier).calls, 1);
  EXPECT_EQ(s.total_logical_bytes(), 24 + 12 + 12 + 12 + 4);
  EXPECT_GE(s.busy_seconds, s.exposed_seconds);
  g->reset_stats();
  EXPECT_EQ(g->stats().total_logical_bytes(), 0);
}

TEST(CommStats, LogicalBytesBusyAndExposedOnThreads) {
  const int n = 3;
  ThreadWorld world(n, CommOptions{});
  const Status st = run_ranks(n, [&](int rank) -> Status {
    auto g = world.group(rank);
    std::vector<float> a(1000, 1.0f);
    const std::vector<size_t> counts = {10, 0, 30};
    std::vector<float> b(40, 1.0f);
    std::vector<char> c(100, 0);
    ZT_RETURN_IF_ERROR(g->all_reduce(a.data(), a.size(), CommDType::kF32)->wait());
    ZT_RETURN_IF_ERROR(g->reduce_scatter(b.data(), counts)->wait());
    ZT_RETURN_IF_ERROR(g->all_gather(b.data(), counts)->wait());
    ZT_RETURN_IF_ERROR(g->broadcast(c.data(), c.size(), 2)->wait());
    // Communication hidden behind "computation": issue, work, then wait.
    auto w = g->all_reduce(a.data(), a.size(), CommDType::kF32);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    ZT_RETURN_IF_ERROR(w->wait());
    ZT_RETURN_IF_ERROR(g->barrier()->wait());
    const CommStats s = g->stats();
    EXPECT_EQ(s.of(CommOp::kAllReduce).calls, 2);
    EXPECT_EQ(s.of(CommOp::kAllReduce).logical_bytes, 2 * 2 * 4000);
    EXPECT_EQ(s.of(CommOp::kReduceScatter).logical_bytes, 160);
    EXPECT_EQ(s.of(CommOp::kAllGather).logical_bytes, 160);
    EXPECT_EQ(s.of(CommOp::kBroadcast).logical_bytes, 100);
    EXPECT_EQ(s.of(CommOp::kBarrier).calls, 1);
    EXPECT_EQ(s.of(CommOp::kBarrier).logical_bytes, 0);
    EXPECT_EQ(s.total_logical_bytes(), 16000 + 160 + 160 + 100);
    EXPECT_GT(s.busy_seconds, 0.0);
    EXPECT_GE(s.busy_seconds, s.exposed_seconds);
    EXPECT_GE(s.hidden_fraction(), 0.0);
    EXPECT_LE(s.hidden_fraction(), 1.0);
    for (const CommOpStats& op : s.ops) EXPECT_GE(op.seconds, 0.0);
    g->reset_stats();
    EXPECT_EQ(g->stats().total_logical_bytes(), 0);
    return Status::OK();
  });
  EXPECT_TRUE(st.ok()) << st.to_string();
}

TEST(CommStats, DeadlineWhenOneRankNeverJoins) {
  const int n = 4;
  CommOptions opts;
  opts.timeout_s = 1.0;
  ThreadWorld world(n, opts);
  std::vector<Status> results(n);
  std::vector<double> elapsed(n, 0.0);
  const Status st = run_ranks(n, [&](int rank) -> Status {
    auto g = world.group(rank);
    g->set_step(12);
    std::vector<float> x(100, 1.0f);
    ZT_RETURN_IF_ERROR(g->barrier()->wait());  // #1: everyone is here
    if (rank == n - 1) return Status::OK();    // the hung peer: never issues #2
    Stopwatch sw;
    results[rank] = g->all_reduce(x.data(), x.size(), CommDType::kF32)->wait();
    elapsed[rank] = sw.seconds();
    return Status::OK();
  });
  ASSERT_TRUE(st.ok()) << st.to_string();
  for (int r = 0; r < n - 1; ++r) {
    EXPECT_EQ(results[r].code(), StatusCode::kDeadlineExceeded) << results[r].to_string();
    EXPECT_TRUE(std::regex_match(results[r].message(),
                                 std::regex("rank " + std::to_string(r) +
                                            ": communication timeout at step 12: all_reduce #2 \\(400 B\\) did not "
                                            "complete in 1\\.[0-9] s \\(timeout 1 s\\); a peer is hung or stopped")))
        << results[r].message();
    EXPECT_GE(elapsed[r], 1.0);
    EXPECT_LT(elapsed[r], 3.0);
    std::printf("rank %d: DeadlineExceeded after %.3f s: %s\n", r, elapsed[r], results[r].message().c_str());
  }
}

}  // namespace
}  // namespace zt
