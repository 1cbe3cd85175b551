// Golden instruction lists for GPipe, 1F1B and interleaved 1F1B, and an event simulation of
// every rank's list together: no deadlock under the executor's rules (receives block; a
// slot's send must be received before the slot is reused), and interleaving's bubble is
// Megatron's (S - 1) / (v M) of the compute.
#include "parallel/pipeline/schedule.h"

#include <gtest/gtest.h>

#include <map>
#include <tuple>

namespace zt {
namespace {

std::string sched(PipeScheduleKind k, int M, int S, int s, int v = 1) {
  return format_pipe_schedule(make_pipe_schedule(k, M, S, s, v));
}

TEST(PipeSchedule, GPipeTwoStagesFourMicroBatches) {
  EXPECT_EQ(sched(PipeScheduleKind::kGPipe, 4, 2, 0),
            "F0 SendAct0 F1 SendAct1 F2 SendAct2 F3 SendAct3 "
            "RecvGrad0 B0 RecvGrad1 B1 RecvGrad2 B2 RecvGrad3 B3 ReduceTied ReduceGrads Step");
  EXPECT_EQ(sched(PipeScheduleKind::kGPipe, 4, 2, 1),
            "RecvAct0 F0 RecvAct1 F1 RecvAct2 F2 RecvAct3 F3 "
            "B0 SendGrad0 B1 SendGrad1 B2 SendGrad2 B3 SendGrad3 ReduceTied ReduceGrads Step");
}

TEST(PipeSchedule, OneFOneBFourStages) {
  EXPECT_EQ(sched(PipeScheduleKind::k1F1B, 4, 4, 0),
            "F0 SendAct0 F1 SendAct1 F2 SendAct2 "
            "F3 SendAct3 RecvGrad0 B0 "
            "RecvGrad1 B1 RecvGrad2 B2 RecvGrad3 B3 ReduceTied ReduceGrads Step");
  EXPECT_EQ(sched(PipeScheduleKind::k1F1B, 4, 4, 2),
            "RecvAct0 F0 SendAct0 "
            "RecvAct1 F1 SendAct1 RecvGrad0 B0 SendGrad0 RecvAct2 F2 SendAct2 RecvGrad1 B1 SendGrad1 "
            "RecvAct3 F3 SendAct3 RecvGrad2 B2 SendGrad2 "
            "RecvGrad3 B3 SendGrad3 ReduceTied ReduceGrads Step");
  EXPECT_EQ(sched(PipeScheduleKind::k1F1B, 4, 4, 3),
            "RecvAct0 F0 B0 SendGrad0 RecvAct1 F1 B1 SendGrad1 RecvAct2 F2 B2 SendGrad2 RecvAct3 F3 B3 SendGrad3 "
            "ReduceTied ReduceGrads Step");
}

TEST(PipeSchedule, OneFOneBWithFewerMicroBatchesThanStages) {
  EXPECT_EQ(sched(PipeScheduleKind::k1F1B, 2, 4, 0),
            "F0 SendAct0 F1 SendAct1 RecvGrad0 B0 RecvGrad1 B1 ReduceTied ReduceGrads Step");
  EXPECT_EQ(pipe_schedule_slots(PipeScheduleKind::k1F1B, 2, 4, 0), 2);
  EXPECT_EQ(pipe_schedule_slots(PipeScheduleKind::k1F1B, 8, 4, 1), 3);
  EXPECT_EQ(pipe_schedule_slots(PipeScheduleKind::kGPipe, 8, 4, 1), 8);
}

TEST(PipeSchedule, EveryMicroBatchForwardAndBackwardOnceInOrder) {
  for (auto k : {PipeScheduleKind::kGPipe, PipeScheduleKind::k1F1B}) {
    for (int S : {1, 2, 3, 4}) {
      for (int M : {1, 2, 5, 8}) {
        for (int s = 0; s < S; ++s) {
          int f = 0, b = 0, in_flight = 0, peak = 0;
          for (const PipeInstruction& i : make_pipe_schedule(k, M, S, s)) {
            if (i.op == PipeOp::kForward) {
              EXPECT_EQ(i.micro_batch, f++);
              peak = std::max(peak, ++in_flight);
            }
            if (i.op == PipeOp::kBackward) {
              EXPECT_EQ(i.micro_batch, b++);
              --in_flight;
            }
          }
          EXPECT_EQ(f, M);
          EXPECT_EQ(b, M);
          EXPECT_LE(peak, pipe_schedule_slots(k, M, S, s));
        }
      }
    }
  }
}

TEST(PipeSchedule, InterleavedTwoStagesTwoChunks) {
  // Rank 0 holds virtual stages 0 and 2, rank 1 stages 1 and 3 (the loss).
  EXPECT_EQ(sched(PipeScheduleKind::k1F1B, 4, 2, 0, 2),
            "F0 SendAct0 F1 SendAct1 RecvAct0.1 F0.1 SendAct0.1 RecvAct1.1 F1.1 SendAct1.1 "
            "F2 SendAct2 RecvGrad0.1 B0.1 SendGrad0.1 F3 SendAct3 RecvGrad1.1 B1.1 SendGrad1.1 "
            "RecvAct2.1 F2.1 SendAct2.1 RecvGrad0 B0 RecvAct3.1 F3.1 SendAct3.1 RecvGrad1 B1 "
            "RecvGrad2.1 B2.1 SendGrad2.1 RecvGrad3.1 B3.1 SendGrad3.1 RecvGrad2 B2 RecvGrad3 B3 "
            "ReduceTied ReduceGrads Step");
  EXPECT_EQ(sched(PipeScheduleKind::k1F1B, 4, 2, 1, 2),
            "RecvAct0 F0 SendAct0 RecvAct1 F1 SendAct1 RecvAct0.1 F0.1 B0.1 SendGrad0.1 "
            "RecvAct1.1 F1.1 B1.1 SendGrad1.1 RecvAct2 F2 SendAct2 RecvGrad0 B0 SendGrad0 "
            "RecvAct3 F3 SendAct3 RecvGrad1 B1 SendGrad1 RecvAct2.1 F2.1 B2.1 SendGrad2.1 "
            "RecvAct3.1 F3.1 B3.1 SendGrad3.1 RecvGrad2 B2 SendGrad2 RecvGrad3 B3 SendGrad3 "
            "ReduceTied ReduceGrads Step");
}

TEST(PipeSchedule, InterleavedRefusesWhatMegatronRefuses) {
  EXPECT_TRUE(check_interleaved(PipeScheduleKind::k1F1B, 8, 4, 2).ok());
  EXPECT_NE(check_interleaved(PipeScheduleKind::k1F1B, 6, 4, 2).message().find("multiple of the pipeline stages"),
            std::string::npos);
  EXPECT_NE(check_interleaved(PipeScheduleKind::kGPipe, 8, 4, 2).message().find("gpipe"), std::string::npos);
  EXPECT_FALSE(check_interleaved(PipeScheduleKind::k1F1B, 8, 1, 2).ok());
  EXPECT_TRUE(check_interleaved(PipeScheduleKind::kGPipe, 6, 4, 1).ok());
}

// Every rank's list run together with forward f and backward b time units per chunk and
// free messages. A receive waits for its send; a forward (gradient send) from a slot whose
// last activation (gradient) send has not been received waits for it, as the executor
// settles it. The finish time of the last rank, or -1 on a deadlock.
double simulate(int M, int S, int v, double f, double b) {
  using Key = std::tuple<int, int, int>;  // kind (0 activation, 1 gradient), micro-batch, virtual stage
  std::map<Key, double> sent, received;
  std::map<std::tuple<int, int, int>, Key> last_send;  // (rank, kind, slot): that slot's last send
  std::vector<std::vector<PipeInstruction>> lists;
  for (int s = 0; s < S; ++s) lists.push_back(make_pipe_schedule(PipeScheduleKind::k1F1B, M, S, s, v));
  std::vector<size_t> pc(static_cast<size_t>(S), 0);
  std::vector<double> clock(static_cast<size_t>(S), 0.0);
  for (bool progress = true; progress;) {
    progress = false;
    for (int s = 0; s < S; ++s) {
      const size_t r = static_cast<size_t>(s);
      while (pc[r] < lists[r].size()) {
        const PipeInstruction& in = lists[r][pc[r]];
        const int k = in.chunk * S + s;  // this virtual stage
        double& t = clock[r];
        auto wait = [&](const std::map<Key, double>& m, Key key) {
          auto it = m.find(key);
          if (it == m.end()) return false;
          t = std::max(t, it->second);
          return true;
        };
        auto settled = [&](int kind) {
          auto it = last_send.find({s, kind, in.slot});
          return it == last_send.end() || wait(received, it->second);
        };
        bool ok = true;
        if (in.op == PipeOp::kRecvActivation) ok = wait(sent, {0, in.micro_batch, k - 1});
        if (in.op == PipeOp::kRecvGrad) ok = wait(sent, {1, in.micro_batch, k + 1});
        if (in.op == PipeOp::kForward) ok = settled(0);
        if (in.op == PipeOp::kSendGrad) ok = settled(1);
        if (!ok) break;
        if (in.op == PipeOp::kRecvActivation) received[{0, in.micro_batch, k - 1}] = t;
        if (in.op == PipeOp::kRecvGrad) received[{1, in.micro_batch, k + 1}] = t;
        if (in.op == PipeOp::kForward) t += f;
        if (in.op == PipeOp::kBackward) t += b;
        if (in.op == PipeOp::kSendActivation) sent[{0, in.micro_batch, k}] = t;
        if (in.op == PipeOp::kSendGrad) sent[{1, in.micro_batch, k}] = t;
        if (in.op == PipeOp::kSendActivation) last_send[{s, 0, in.slot}] = {0, in.micro_batch, k};
        if (in.op == PipeOp::kSendGrad) last_send[{s, 1, in.slot}] = {1, in.micro_batch, k};
        ++pc[r];
        progress = true;
      }
    }
  }
  for (int s = 0; s < S; ++s) {
    if (pc[static_cast<size_t>(s)] < lists[static_cast<size_t>(s)].size()) return -1.0;
  }
  return *std::max_element(clock.begin(), clock.end());
}

TEST(PipeSchedule, InterleavedRunsWithoutDeadlockAndEveryChunkInOrder) {
  for (int S : {2, 3, 4}) {
    for (int v : {1, 2, 3}) {
      for (int M : {S, 2 * S, 4 * S}) {
        EXPECT_GT(simulate(M, S, v, 1.0, 2.0), 0.0) << "S " << S << " v " << v << " M " << M;
        for (int s = 0; s < S; ++s) {
          std::vector<int> f(static_cast<size_t>(v), 0), b(static_cast<size_t>(v), 0);
          for (const PipeInstruction& i : make_pipe_schedule(PipeScheduleKind::k1F1B, M, S, s, v)) {
            if (i.op == PipeOp::kForward) EXPECT_EQ(i.micro_batch, f[static_cast<size_t>(i.chunk)]++);
            if (i.op == PipeOp::kBackward) EXPECT_EQ(i.micro_batch, b[static_cast<size_t>(i.chunk)]++);
          }
          for (int j = 0; j < v; ++j) EXPECT_EQ(f[static_cast<size_t>(j)], M);
          for (int j = 0; j < v; ++j) EXPECT_EQ(b[static_cast<size_t>(j)], M);
        }
      }
    }
  }
}

// The model chunks split a stage's work v ways: chunk times f/v, b/v. The bubble (makespan
// over the compute, less one) is (S - 1) / M for 1F1B and (S - 1) / (v M) interleaved.
TEST(PipeSchedule, InterleavedBubbleIsMegatrons) {
  for (int S : {2, 4}) {
    for (int M : {2 * S, 4 * S}) {
      for (int v : {1, 2, 4}) {
        const double f = 1.0 / v, b = 2.0 / v, compute = M * 3.0;
        const double bubble = simulate(M, S, v, f, b) / compute - 1.0;
        EXPECT_NEAR(bubble, (S - 1.0) / (v * M), 1e-9) << "S " << S << " v " << v << " M " << M;
      }
    }
  }
}

// A slot holds one chunk's micro-batch at a time: rank 0 of pp 4 with 2 chunks and 8
// micro-batches holds its 10 warm-up forwards and the first steady one (Megatron's count),
// and the last rank runs each head forward's backward at once.
TEST(PipeSchedule, InterleavedSlotsHoldOneChunkMicroBatchEach) {
  EXPECT_EQ(pipe_schedule_slots(PipeScheduleKind::k1F1B, 8, 4, 0, 2), 11);
  EXPECT_EQ(pipe_schedule_slots(PipeScheduleKind::k1F1B, 8, 4, 3, 2), 5);
  for (int s = 0; s < 4; ++s) {
    std::map<int, std::pair<int, int>> holder;  // slot -> (micro-batch, chunk) holding it
    for (const PipeInstruction& i : make_pipe_schedule(PipeScheduleKind::k1F1B, 8, 4, s, 2)) {
      if (i.micro_batch < 0 || i.op == PipeOp::kSendGrad) continue;  // SendGrad follows its backward
      auto [it, fresh] = holder.emplace(i.slot, std::make_pair(i.micro_batch, i.chunk));
      EXPECT_TRUE(fresh || it->second == std::make_pair(i.micro_batch, i.chunk)) << "stage " << s << " slot " << i.slot;
      if (i.op == PipeOp::kBackward) holder.erase(i.slot);
    }
  }
  EXPECT_TRUE(pipe_schedule_head_at_once(PipeScheduleKind::k1F1B, 8, 4, 3, 2));
  EXPECT_TRUE(pipe_schedule_head_at_once(PipeScheduleKind::k1F1B, 8, 4, 3, 1));
  EXPECT_FALSE(pipe_schedule_head_at_once(PipeScheduleKind::k1F1B, 4, 4, 3, 2));  // all warm-up
  EXPECT_FALSE(pipe_schedule_head_at_once(PipeScheduleKind::kGPipe, 8, 4, 3, 1));
  EXPECT_FALSE(pipe_schedule_head_at_once(PipeScheduleKind::k1F1B, 8, 4, 2, 2));
}

}  // namespace
}  // namespace zt
