// Experts in the engine (issue 30): a killed MoE run resumes bit for bit (the routing is a
// function of the weights and tokens, so nothing beyond the model states is saved), a
// checkpoint reloads into another layout, and the manifest carries the MoE knob so a
// dense configuration cannot resume it. Exactness against the single process is in
// trainer_model_parallel_test.cc (ModelParallel.MixtureOfExpertsMatchesSingleProcess).
#include <gtest/gtest.h>

#include "testing/small_trainer.h"
#include "testing/temp_dir_test.h"

namespace zt {
namespace {

// The small trainer's Llama with 4 top-2 experts in every block (DeepSpeed's gate, tokens
// dropped at capacity 1.25, balance loss in the objective).
TrainerOptions moe_trainer(ZeroStage stage) {
  TrainerOptions o = testing::small_trainer(testing::tiny_config(true, 2, 32, 61, 8, 48), stage);
  MoeConfig& m = o.model.moe;
  m.num_experts = 4;
  m.gate.k = 2;
  m.gate.capacity_factor = 1.25;
  m.gate.min_capacity = 0;
  m.gate.use_rts = m.gate.second_sampling = false;
  m.aux_loss_coef = 0.01;
  return o;
}

class TrainerMoe : public testing::TempDirTest {};

TEST_F(TrainerMoe, KilledRunResumesBitForBit) {
  for (int stage : {1, 2}) {
    const TrainerOptions o = moe_trainer(static_cast<ZeroStage>(stage));
    const std::string dir = dir_ + "/s" + std::to_string(stage);
    const testing::RunOut whole = testing::train_ranks(o, 2, 2, 0, 6), first = testing::train_ranks(o, 2, 2, 0, 3, "", dir),
                         second = testing::train_ranks(o, 2, 2, 3, 6, dir);
    ASSERT_TRUE(whole.status.ok() && first.status.ok() && second.status.ok()) << second.status.to_string();
    std::vector<double> resumed = first.losses;
    resumed.insert(resumed.end(), second.losses.begin(), second.losses.end());
    EXPECT_EQ(resumed, whole.losses) << "ZeRO-" << stage;
    EXPECT_TRUE(second.params == whole.params) << "ZeRO-" << stage;
  }
}

TEST_F(TrainerMoe, CheckpointReshardsAndNamesItsExperts) {
  const std::string dir = dir_ + "/ckpt";
  const TrainerOptions two = moe_trainer(ZeroStage::kGradients);
  const testing::RunOut saved = testing::train_ranks(two, 2, 2, 0, 2, "", dir);
  ASSERT_TRUE(saved.status.ok()) << saved.status.to_string();
  // Into one process with ZeRO-0 and into 4 ranks with ZeRO-3: the same next step on the
  // same global batch (8 sequences, each micro-batch routed alike).
  const testing::RunOut one = testing::train_ranks(moe_trainer(ZeroStage::kNone), 1, 4, 2, 3, dir);
  const testing::RunOut four = testing::train_ranks(moe_trainer(ZeroStage::kParameters), 4, 1, 2, 3, dir);
  ASSERT_TRUE(one.status.ok() && four.status.ok()) << one.status.to_string() << four.status.to_string();
  EXPECT_NEAR(four.losses[0], one.losses[0], 1e-5 * one.losses[0]);
  const CheckpointRef ckpt = open_checkpoint(dir).value();
  EXPECT_EQ(ckpt.manifest.model.moe, two.model.moe);
  // A dense model of the same shape is another model.
  TrainerOptions dense = two;
  dense.model.moe = MoeConfig{};
  const testing::RunOut refused = testing::train_ranks(dense, 1, 4, 2, 3, dir);
  EXPECT_FALSE(refused.status.ok());
}

// Expert parallelism: a killed ep 2 run resumes bit for bit (ZeRO-0 and -2), and an ep 4
// ZeRO-1 checkpoint, whose experts each rank wrote a part of, reloads into ep 2 with ZeRO-2
// and into one process.
TEST_F(TrainerMoe, ExpertParallelResumesAndReshardsAcrossEp) {
  for (int stage : {0, 2}) {  // dp 4, ep 2: ZeRO-2 partitions over the expert-data-parallel pairs
    const TrainerOptions o = moe_trainer(static_cast<ZeroStage>(stage));
    const std::string run = dir_ + "/ep2_" + std::to_string(stage);
    const testing::RunOut whole = testing::train_ranks(o, 4, 1, 0, 6, "", "", 2),
                          first = testing::train_ranks(o, 4, 1, 0, 3, "", run, 2),
                          second = testing::train_ranks(o, 4, 1, 3, 6, run, "", 2);
    ASSERT_TRUE(whole.status.ok() && first.status.ok() && second.status.ok()) << second.status.to_string();
    std::vector<double> resumed = first.losses;
    resumed.insert(resumed.end(), second.losses.begin(), second.losses.end());
    EXPECT_EQ(resumed, whole.losses) << "ZeRO-" << stage;
    EXPECT_TRUE(second.params == whole.params) << "ZeRO-" << stage;
  }
  const std::string dir = dir_ + "/ep4";
  const testing::RunOut saved = testing::train_ranks(moe_trainer(ZeroStage::kOptimizer), 4, 1, 0, 2, "", dir, 4);
  ASSERT_TRUE(saved.status.ok()) << saved.status.to_string();
  const CheckpointRef ckpt = open_checkpoint(dir).value();
  EXPECT_EQ(ckpt.manifest.layout.ep, 4);
  const testing::RunOut ep2 = testing::train_ranks(moe_trainer(ZeroStage::kGradients), 4, 1, 2, 3, dir, "", 2),
                        one = testing::train_ranks(moe_trainer(ZeroStage::kNone), 1, 4, 2, 3, dir);
  ASSERT_TRUE(ep2.status.ok() && one.status.ok()) << ep2.status.to_string() << one.status.to_string();
  EXPECT_NEAR(ep2.losses[0], one.losses[0], 1e-5 * one.losses[0]);
  // The single process read every expert of the checkpoint: its step 2 is the one an
  // uninterrupted single process takes, within float reduction order.
  const testing::RunOut straight = testing::train_ranks(moe_trainer(ZeroStage::kNone), 1, 4, 0, 3);
  EXPECT_NEAR(one.losses[0], straight.losses[2], 1e-5 * straight.losses[2]);
}

// Evaluation under ep: every forward is collective over the ep group, so with 3 batches on
// 2 ranks the second rank runs a dummy forward for the third; the loss is the single
// process's over the same 3 batches.
TEST_F(TrainerMoe, ExpertParallelEvaluationRunsDummyForwards) {
  const TrainerOptions o = moe_trainer(ZeroStage::kNone);
  const testing::SyntheticStep val = testing::synthetic_step(61, 8, 2, 3, 0, 1, 99, 7);  // 3 micro-batches
  auto single = Trainer::create(o);
  ASSERT_TRUE(single.ok()) << single.status().to_string();
  const StatusOr<double> want = (*single)->evaluate(val.micro_batches());
  ASSERT_TRUE(want.ok()) << want.status().to_string();
  const int N = 2;
  ThreadWorld world(N, CommOptions{});
  const RankGrid grid = RankGrid::create(N, 1, N, 1, 2).value();
  std::vector<double> got(N);
  const Status st = run_ranks(N, [&](int rank) -> Status {
    ParallelGroups groups = make_thread_groups(world, grid, rank);
    TrainerOptions mine = o;
    ZT_ASSIGN_OR_RETURN(mine.layout, layout_for_rank(o.model, grid, rank, StagePartition::kUniform));
    ZT_ASSIGN_OR_RETURN(auto t, Trainer::create(mine, &groups));
    ZT_ASSIGN_OR_RETURN(got[static_cast<size_t>(rank)], t->evaluate(val.micro_batches()));
    return Status::OK();
  });
  ASSERT_TRUE(st.ok()) << st.to_string();
  for (double g : got) EXPECT_NEAR(g, *want, 1e-6 * *want);
}

// NVMe offload of the optimizer state (ZeRO-2) and of the parameter shard (ZeRO-3) under
// ep 2 on 4 ranks: the same bits as the states kept in memory.
TEST_F(TrainerMoe, ExpertParallelWithNvmeOffloadGivesTheSameBits) {
  for (int stage : {2, 3}) {
    const TrainerOptions plain = moe_trainer(static_cast<ZeroStage>(stage));
    TrainerOptions off = plain;
    OffloadOptions& f = off.zero.offload;
    f.optimizer_device = OffloadDevice::kNvme;
    f.param_device = stage == 3 ? OffloadDevice::kNvme : OffloadDevice::kNone;
    f.optimizer_path = f.param_path = dir_;
    f.max_in_cpu = 2000;
    f.aio.block_size = 16384;
    const testing::RunOut a = testing::train_ranks(plain, 4, 1, 0, 3, "", "", 2),
                          b = testing::train_ranks(off, 4, 1, 0, 3, "", "", 2);
    ASSERT_TRUE(a.status.ok() && b.status.ok()) << b.status.to_string();
    EXPECT_EQ(a.losses, b.losses) << "ZeRO-" << stage;
    EXPECT_TRUE(a.params == b.params) << "ZeRO-" << stage;
  }
}

// DeepSpeed's defaults for top-1: random token selection when tokens drop, and RSample
// noise. The draws are keyed by the seed, the step and the micro-batch's place in the
// global batch: two runs agree bit for bit, dp 2 agrees with the single process, and the
// noise really changes the routing.
TEST_F(TrainerMoe, NoisyTop1RoutingIsKeyedByTheGlobalBatch) {
  TrainerOptions o = moe_trainer(ZeroStage::kOptimizer);
  o.model.moe.gate.k = 1;
  o.model.moe.gate.use_rts = o.model.moe.gate.rsample = true;
  const testing::RunOut a = testing::train_ranks(o, 1, 4, 0, 4), b = testing::train_ranks(o, 1, 4, 0, 4),
                        dp = testing::train_ranks(o, 2, 2, 0, 4);
  ASSERT_TRUE(a.status.ok() && dp.status.ok()) << a.status.to_string() << dp.status.to_string();
  EXPECT_EQ(a.losses, b.losses);
  EXPECT_TRUE(a.params == b.params);
  for (size_t s = 0; s < a.losses.size(); ++s) EXPECT_NEAR(dp.losses[s], a.losses[s], 1e-5 * a.losses[s]) << s;
  TrainerOptions quiet = o;
  quiet.model.moe.gate.use_rts = quiet.model.moe.gate.rsample = false;
  EXPECT_NE(testing::train_ranks(quiet, 1, 4, 0, 4).losses, a.losses) << "the noise changed no routing";
}

}  // namespace
}  // namespace zt
