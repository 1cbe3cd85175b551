// The training-efficiency features in the Trainer (engine/efficiency.h):
// - each schedule, step by step, against the independent Python statement of DeepSpeed's
//   rule (tests/efficiency/*_oracle.py): curriculum difficulties (fixed_linear, fixed_root,
//   fixed_discrete), random-LTD's reserved lengths and token count, layer drop's theta and
//   per-block keep probabilities and scales;
// - the curriculum truncates every sequence to its first d tokens: bit for bit the run of
//   a model fed those tokens;
// - curriculum + layer drop + random-LTD on 2 thread-ranks at every ZeRO stage, and in
//   bf16, match the single process on the same global batch;
// - a run killed after step 3 resumes bit for bit, with the schedules in the checkpoint.
#include "engine/efficiency.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "checkpoint/sharded_load.h"
#include "comm/thread_world.h"
#include "engine/trainer.h"
#include "engine/trainer_checkpoint.h"
#include "testing/launch.h"
#include "testing/efficiency_oracle.h"
#include "testing/small_trainer.h"
#include "testing/synthetic_data.h"
#include "testing/temp_dir_test.h"

namespace zt {
namespace {

using testing::efficiency_oracle;

TEST(Efficiency, CurriculumSchedulesFollowDeepSpeedStepByStep) {
  struct Case {
    const char* json;
    CurriculumOptions o;
  };
  CurriculumOptions lin{8, 64, CurriculumKind::kFixedLinear, 20, 8, 1.0, {}, {}};
  CurriculumOptions root{8, 1024, CurriculumKind::kFixedRoot, 100, 8, 2.0, {}, {}};
  CurriculumOptions disc{8, 32, CurriculumKind::kFixedDiscrete, 0, 1, 1.0, {8, 16, 32}, {3, 7}};
  const Case cases[] = {
      {R"({"min_difficulty": 8, "max_difficulty": 64, "schedule_type": "fixed_linear", "schedule_config": {"total_curriculum_step": 20, "difficulty_step": 8}})", lin},
      {R"({"min_difficulty": 8, "max_difficulty": 1024, "schedule_type": "fixed_root", "schedule_config": {"total_curriculum_step": 100, "difficulty_step": 8, "root_degree": 2}})", root},
      {R"({"min_difficulty": 8, "max_difficulty": 32, "schedule_type": "fixed_discrete", "schedule_config": {"difficulty": [8, 16, 32], "max_step": [3, 7]}})", disc},
  };
  for (const Case& c : cases) {
    const Json ref = efficiency_oracle("curriculum_oracle.py", c.json, "--steps 0:130");
    CurriculumSchedule s(c.o);
    ASSERT_EQ(ref["results"].size(), 130u);
    for (const Json& row : ref["results"]) {
      const int64_t g = row["global_steps"].get<int64_t>();
      EXPECT_EQ(s.update(g + 1), row["difficulty"].get<int64_t>()) << c.json << " after " << g << " steps";
    }
  }
}

TEST(Efficiency, RandomLtdAndLayerDropFollowDeepSpeedStepByStep) {
  RandomLtdOptions ltd{true, {0, 2}, 4, 16, 10, 4};
  RandomLtd r(ltd, 3, 1);
  const Json ref = efficiency_oracle("random_ltd_oracle.py",
                          R"({"random_ltd_schedule": {"min_value": 4, "max_value": 16, "schedule_type": "fixed_linear",
                              "schedule_config": {"require_steps": 10, "seq_per_step": 4}},
                              "total_layer_num": 3, "random_ltd_layer_num": 2, "global_batch_size": 8})",
                          "--steps 0:16");
  for (const Json& row : ref["results"]) {
    const int64_t g = row["global_steps"].get<int64_t>();
    EXPECT_EQ(r.update(g, 8), row["reserved_length"].get<int64_t>()) << g;
    EXPECT_EQ(r.state().consumed_layer_tokens, row["consumed_layer_tokens"].get<int64_t>()) << g;
  }
  const LayerDrop pld({true, 0.5, 0.1}, 4, 1);
  const Json p = efficiency_oracle("pld_oracle.py", R"({"theta": 0.5, "gamma": 0.1, "num_layers": 4})", "--steps 0:12");
  for (const Json& row : p["results"]) {
    const int64_t k = row["global_steps"].get<int64_t>();
    EXPECT_NEAR(pld.theta_used(k), row["theta_used"].get<double>(), 1e-15) << k;
    const std::vector<double> keep = pld.keep_probs(k);
    for (int i = 0; i < 4; ++i) {
      EXPECT_NEAR(keep[static_cast<size_t>(i)], row["keep_prob"][i].get<double>(), 1e-15) << k << " block " << i;
      EXPECT_NEAR(1.0 / keep[static_cast<size_t>(i) + 1], row["scale"][i].get<double>(), 1e-12) << k << " block " << i;
    }
  }
}

// A ramp from 4 to 8 tokens over 3 steps, layer drop, random-LTD on blocks 0 and 2.
TrainerOptions efficient(ZeroStage stage, DType dtype = DType::kF32) {
  TrainerOptions o = testing::small_trainer(testing::tiny_config(false, 3, 32, 61, 8, 0), stage);
  o.backend = backend_for(Device::kCpu, dtype).value();
  o.efficiency.seqlen_curriculum = CurriculumOptions{4, 8, CurriculumKind::kFixedLinear, 3, 2, 1.0, {}, {}};
  o.efficiency.layer_drop = {true, 0.5, 0.3};
  o.efficiency.random_ltd = {true, {0, 2}, 2, 8, 4, 2};
  return o;
}

TEST(Efficiency, CurriculumTruncatesToTheFirstTokensBitForBit) {
  TrainerOptions cur = efficient(ZeroStage::kNone);
  cur.efficiency.layer_drop.enabled = false;
  cur.efficiency.random_ltd.enabled = false;
  cur.efficiency.seqlen_curriculum = CurriculumOptions{4, 4, CurriculumKind::kFixedLinear, 1, 4, 1.0, {}, {}};
  TrainerOptions plain = cur;
  plain.efficiency = {};
  plain.seq_len = 4;
  auto a = Trainer::create(cur), b = Trainer::create(plain);
  ASSERT_TRUE(a.ok() && b.ok());
  for (int step = 0; step < 3; ++step) {
    const testing::SyntheticStep full = testing::synthetic_step(61, 8, 2, 1, 0, 1, step, 3);
    std::vector<int32_t> x, y;
    for (int row = 0; row < 2; ++row) {
      x.insert(x.end(), full.data[0].tokens.begin() + row * 8, full.data[0].tokens.begin() + row * 8 + 4);
      y.insert(y.end(), full.data[0].targets.begin() + row * 8, full.data[0].targets.begin() + row * 8 + 4);
    }
    const StepStats sa = (*a)->step(full.micro_batches()).value(), sb = (*b)->step({{x.data(), y.data()}}).value();
    EXPECT_EQ(sa.loss, sb.loss) << "step " << step;
    EXPECT_EQ(sa.tokens, 8);
  }
}

TEST(Efficiency, EveryZeroStageAndBf16MatchTheSingleProcess) {
  const int N = 2, accum = 2, steps = 5;
  for (DType dtype : {DType::kF32, DType::kBF16}) {
    const testing::RunOut ref = testing::train_ranks(efficient(ZeroStage::kNone, dtype), 1, N * accum, 0, steps);
    ASSERT_TRUE(ref.status.ok()) << ref.status.to_string();
    EXPECT_EQ(ref.seq_lens, (std::vector<int>{4, 6, 8, 8, 8}));  // d(1..5) of the 4 -> 8 ramp over 3 steps, in 2s
    TrainerOptions off = efficient(ZeroStage::kNone, dtype);
    off.efficiency = {};
    EXPECT_NE(testing::train_ranks(off, 1, N * accum, 0, steps).losses, ref.losses) << "the features changed nothing";
    for (int stage = 0; stage <= 3; ++stage) {
      const testing::RunOut r = testing::train_ranks(efficient(static_cast<ZeroStage>(stage), dtype), N, accum, 0, steps);
      ASSERT_TRUE(r.status.ok()) << r.status.to_string();
      double worst = 0.0;
      for (int s = 0; s < steps; ++s) worst = std::max(worst, std::fabs(r.losses[s] - ref.losses[s]) / ref.losses[s]);
      EXPECT_LE(worst, dtype == DType::kF32 ? 1e-5 : 1e-2) << dtype_name(dtype) << " stage " << stage;
      std::printf("  %s stage %d, dp %d x accumulation %d: max loss rel diff %.2e\n", dtype_name(dtype), stage, N, accum,
                  worst);
    }
  }
}

class EfficiencyResume : public testing::TempDirTest {};

TEST_F(EfficiencyResume, KilledRunResumesBitForBitWithTheSchedules) {
  for (int stage : {0, 3}) {
    const TrainerOptions o = efficient(static_cast<ZeroStage>(stage));
    const std::string dir = dir_ + "/s" + std::to_string(stage);
    const testing::RunOut whole = testing::train_ranks(o, 2, 1, 0, 6), first = testing::train_ranks(o, 2, 1, 0, 3, "", dir),
                         second = testing::train_ranks(o, 2, 1, 3, 6, dir);
    ASSERT_TRUE(whole.status.ok() && first.status.ok() && second.status.ok()) << second.status.to_string();
    std::vector<double> resumed = first.losses;
    resumed.insert(resumed.end(), second.losses.begin(), second.losses.end());
    EXPECT_EQ(resumed, whole.losses) << "stage " << stage;
    EXPECT_TRUE(second.params == whole.params) << "stage " << stage;
    const Json sched = open_checkpoint(dir).value().manifest.engine.schedules;  // Trainer::schedules_state
    EXPECT_EQ(sched["curriculum"]["current_difficulty"], 8) << sched.dump();
    EXPECT_EQ(sched["random_ltd"]["current_steps"], 2) << sched.dump();
    EXPECT_TRUE(sched.contains("progressive_layer_drop")) << sched.dump();
  }
}

}  // namespace
}  // namespace zt
