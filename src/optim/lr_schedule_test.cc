// DeepSpeed schedule values worked by hand from lr_schedules.py. Iteration -1 is the
// scheduler's constructor state, i.e. what the first optimizer step uses.
#include "optim/lr_schedule.h"

#include <gtest/gtest.h>

#include <cmath>

namespace zt {
namespace {

TEST(LrSchedule, WarmupLRLogAndLinear) {
  LrScheduleOptions o;
  o.kind = ScheduleKind::kWarmupLR;
  o.warmup_min_lr = 0.0;
  o.warmup_max_lr = 0.001;
  o.warmup_num_steps = 10;
  LrSchedule log_sched(o);
  EXPECT_DOUBLE_EQ(log_sched.at(-1).lr, 0.0);
  EXPECT_DOUBLE_EQ(log_sched.at(0).lr, 0.0);                                  // log(1) = 0
  EXPECT_DOUBLE_EQ(log_sched.at(4).lr, 0.001 * std::log(5.0) / std::log(10.0));
  EXPECT_DOUBLE_EQ(log_sched.at(10).lr, 0.001);
  EXPECT_DOUBLE_EQ(log_sched.at(1000).lr, 0.001);
  o.warmup_type = WarmupType::kLinear;
  LrSchedule lin(o);
  EXPECT_DOUBLE_EQ(lin.at(3).lr, 0.0003);
  EXPECT_DOUBLE_EQ(lin.at(9).lr, 0.0009);
  // warmup_max_lr defaults to the optimizer's lr; warmup_num_steps is at least 2.
  o.warmup_max_lr = NAN;
  o.base_lr = 0.5;
  o.warmup_num_steps = 1;
  LrSchedule dflt(o);
  EXPECT_DOUBLE_EQ(dflt.at(1).lr, 0.25);
  EXPECT_DOUBLE_EQ(dflt.at(2).lr, 0.5);
}

TEST(LrSchedule, WarmupDecayLR) {
  LrScheduleOptions o;
  o.kind = ScheduleKind::kWarmupDecayLR;
  o.warmup_min_lr = 0.0;
  o.warmup_num_steps = 10;
  o.total_num_steps = 110;
  o.warmup_type = WarmupType::kLinear;
  LrSchedule s(o);  // warmup_max_lr defaults to 0.001 here (DeepSpeed's class default)
  EXPECT_DOUBLE_EQ(s.at(5).lr, 0.0005);
  EXPECT_DOUBLE_EQ(s.at(10).lr, 0.001);            // (110 - 10) / 100
  EXPECT_DOUBLE_EQ(s.at(60).lr, 0.001 * 0.5);
  EXPECT_DOUBLE_EQ(s.at(110).lr, 0.0);
  EXPECT_DOUBLE_EQ(s.at(200).lr, 0.0);
}

TEST(LrSchedule, WarmupCosineLR) {
  LrScheduleOptions o;
  o.kind = ScheduleKind::kWarmupCosineLR;
  o.base_lr = 0.01;
  o.warmup_num_steps = 4;
  o.warmup_min_ratio = 0.0;
  o.cos_min_ratio = 0.1;
  o.total_num_steps = 14;
  o.warmup_type = WarmupType::kLinear;
  LrSchedule s(o);
  EXPECT_DOUBLE_EQ(s.at(-1).lr, 0.0);
  EXPECT_DOUBLE_EQ(s.at(2).lr, 0.01 * 0.5);
  // it = 8: real_last = 5 of 10 -> cosine 0.5 -> ratio 0.1 + 0.9 * 0.5
  EXPECT_NEAR(s.at(8).lr, 0.01 * 0.55, 1e-15);
  EXPECT_NEAR(s.at(13).lr, 0.01 * 0.1, 1e-15);
  EXPECT_NEAR(s.at(50).lr, 0.01 * 0.1, 1e-15);  // clamped at the end
}

TEST(LrSchedule, OneCycle) {
  LrScheduleOptions o;
  o.kind = ScheduleKind::kOneCycle;
  o.cycle_min_lr = 0.001;
  o.cycle_max_lr = 0.011;
  o.cycle_first_step_size = 10;
  o.cycle_min_mom = 0.8;
  o.cycle_max_mom = 0.9;
  LrSchedule s(o);
  EXPECT_DOUBLE_EQ(s.at(-1).lr, 0.001);
  EXPECT_DOUBLE_EQ(s.at(-1).momentum, 0.8);
  EXPECT_NEAR(s.at(4).lr, 0.001 + 0.01 * 0.5, 1e-15);  // batch 5 of 10 up
  EXPECT_NEAR(s.at(4).momentum, 0.9 - 0.1 * 0.5, 1e-15);
  EXPECT_NEAR(s.at(9).lr, 0.011, 1e-15);                // peak
  EXPECT_NEAR(s.at(14).lr, 0.001 + 0.01 * 0.5, 1e-15);  // halfway down
  EXPECT_NEAR(s.at(25).lr, 0.001, 1e-15);               // after the cycle, no decay configured
  o.decay_step_size = 5;
  o.decay_lr_rate = 1.0;
  LrSchedule d(o);
  EXPECT_NEAR(d.at(29).lr, 0.001 / (1.0 + 10.0 / 5.0), 1e-15);
  o.cycle_first_stair_count = 2;
  LrSchedule stairs(o);
  EXPECT_NEAR(stairs.at(3).lr, 0.001, 1e-15);           // position 0.8 of 2 stairs -> floor 0
  EXPECT_NEAR(stairs.at(5).lr, 0.001 + 0.01 * 0.5, 1e-15);
}

TEST(LrSchedule, Constant) {
  LrScheduleOptions o;
  o.base_lr = 3e-4;
  LrSchedule s(o);
  EXPECT_DOUBLE_EQ(s.at(-1).lr, 3e-4);
  EXPECT_DOUBLE_EQ(s.at(1234).lr, 3e-4);
  EXPECT_TRUE(std::isnan(s.at(0).momentum));
}

}  // namespace
}  // namespace zt
