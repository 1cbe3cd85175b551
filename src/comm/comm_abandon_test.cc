// ProcessGroup::abandon on the thread backend: a rank that fails with operations in
// flight withdraws them before it frees their buffers. Its Works fail with the given
// status, nothing is written into (or read from) its buffers afterwards even when the
// peers arrive late, and the peers' own operations fail at their deadline as they would
// on a stopped rank. (The parameter-server roles rely on this: a server that gives up at
// its deadline still has receives posted for the workers' pushes.)
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "comm/thread_world.h"

namespace zt {
namespace {

TEST(CommAbandon, WithdrawnBuffersAreNeverTouchedAndPeersTimeOut) {
  CommOptions o;
  o.timeout_s = 0.5;
  ThreadWorld world(2, o);
  std::atomic<bool> abandoned{false};
  std::vector<float> recv_buf(64, 7.0f), reduce_buf(64, 7.0f), send_buf(64, 7.0f);
  Status peer_send, peer_reduce, peer_recv, mine_recv, mine_reduce, mine_send;
  const Status s = run_ranks(2, [&](int rank) -> Status {
    auto g = world.group(rank);
    if (rank == 0) {
      WorkHandle recv = g->recv(recv_buf.data(), recv_buf.size() * sizeof(float), 1, 5);
      WorkHandle reduce = g->all_reduce(reduce_buf.data(), reduce_buf.size(), CommDType::kF32);
      WorkHandle send = g->send(send_buf.data(), send_buf.size() * sizeof(float), 1, 6);
      g->abandon(Status::Internal("rank 0 failed"));
      mine_recv = recv->wait();
      mine_reduce = reduce->wait();
      mine_send = send->wait();
      abandoned = true;
      // The peer now sends, joins the all-reduce and receives: none of it may reach
      // rank 0's buffers, which a failed rank would free at this point.
      std::this_thread::sleep_for(std::chrono::milliseconds(900));
      return Status::OK();
    }
    while (!abandoned) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    std::vector<float> out(64, 1.0f), sum(64, 1.0f), in(64, 0.0f);
    WorkHandle send = g->send(out.data(), out.size() * sizeof(float), 0, 5);
    WorkHandle reduce = g->all_reduce(sum.data(), sum.size(), CommDType::kF32);
    WorkHandle recv = g->recv(in.data(), in.size() * sizeof(float), 0, 6);
    peer_send = send->wait();
    peer_reduce = reduce->wait();
    peer_recv = recv->wait();
    EXPECT_EQ(in, std::vector<float>(64, 0.0f)) << "received from a withdrawn send";
    return Status::OK();
  });
  ASSERT_TRUE(s.ok()) << s.to_string();
  for (const Status* st : {&mine_recv, &mine_reduce, &mine_send}) {
    EXPECT_EQ(st->code(), StatusCode::kInternal) << st->to_string();
    EXPECT_EQ(st->message(), "rank 0 failed");
  }
  for (const Status* st : {&peer_send, &peer_reduce, &peer_recv}) {
    EXPECT_EQ(st->code(), StatusCode::kDeadlineExceeded) << st->to_string();
  }
  EXPECT_EQ(recv_buf, std::vector<float>(64, 7.0f));
  EXPECT_EQ(reduce_buf, std::vector<float>(64, 7.0f));
}

}  // namespace
}  // namespace zt
