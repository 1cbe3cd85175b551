// Golden instruction lists for GPipe and 1F1B.
#include "parallel/pipeline/schedule.h"

#include <gtest/gtest.h>

namespace zt {
namespace {

std::string sched(PipeScheduleKind k, int M, int S, int s) { return format_pipe_schedule(make_pipe_schedule(k, M, S, s)); }

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

}  // namespace
}  // namespace zt
