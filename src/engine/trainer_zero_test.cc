// ZeRO in one process (thread backend, ranks as threads): per-rank model-state bytes
// against the ZeRO paper's formulas, logical communication volume per step against the
// all-reduce volume, and exactness against the single process (quick in-process versions
// of the mpirun tests in tests/dp/).
#include <gtest/gtest.h>

#include <cmath>
#include <mutex>
#include <vector>

#include "comm/thread_world.h"
#include "engine/trainer.h"
#include "testing/small_trainer.h"
#include "testing/synthetic_data.h"

namespace zt {
namespace {

// llama: a grouped-query Llama (4 heads, 2 kv heads, untied head) of the same width.
TrainerOptions tiny(ZeroStage stage, bool llama = false) {
  return testing::small_trainer(testing::tiny_config(llama, 3, 48, 61, 8, 96), stage);
}

struct RankResult {
  MemoryReport memory;
  int64_t step_bytes = 0;
  double hidden = 0.0;
  std::vector<double> losses;
  std::vector<float> params;
};

// Trains `steps` steps on N thread-ranks; returns every rank's figures (step 2's bytes).
std::vector<RankResult> train(int N, ZeroStage stage, int accum, int steps, bool llama = false) {
  ThreadWorld world(N, CommOptions{});
  std::vector<RankResult> out(static_cast<size_t>(N));
  const Status s = run_ranks(N, [&](int rank) -> Status {
    auto group = world.group(rank);
    ZT_ASSIGN_OR_RETURN(auto t, Trainer::create(tiny(stage, llama), group.get()));
    RankResult& r = out[static_cast<size_t>(rank)];
    for (int step = 0; step < steps; ++step) {
      const testing::SyntheticStep data = testing::synthetic_step(61, 8, 2, accum, rank, N, step, 3);
      if (step == 1) group->reset_stats();
      ZT_ASSIGN_OR_RETURN(StepStats st, t->step(data.micro_batches()));
      if (step == 1) {
        r.step_bytes = group->stats().total_logical_bytes();
        r.hidden = group->stats().hidden_fraction();
      }
      r.losses.push_back(st.loss);
    }
    r.memory = t->memory();
    r.params.resize(t->param_table().numel());
    return t->gather_params(r.params.data());
  });
  EXPECT_TRUE(s.ok()) << s.to_string();
  return out;
}

TEST(TrainerZero, ModelStateBytesMatchZeroFormulas) {
  const double psi = static_cast<double>(build_gpt_param_table(tiny(ZeroStage::kNone).model).numel());
  for (int N : {2, 4}) {
    const double formula[4] = {16 * psi, 8 * psi + 8 * psi / N, 4 * psi + 12 * psi / N, 16 * psi / N};
    for (int stage = 0; stage <= 3; ++stage) {
      const auto ranks = train(N, static_cast<ZeroStage>(stage), 1, 1);
      for (const RankResult& r : ranks) {
        const double states = static_cast<double>(r.memory.param_bytes + r.memory.grad_bytes + r.memory.optimizer_bytes);
        EXPECT_NEAR(states / formula[stage], 1.0, 0.05) << "stage " << stage << ", N=" << N;
      }
      std::printf("  N=%d stage %d: model states %.0f bytes (formula %.0f), buckets %zu bytes\n", N, stage,
                  static_cast<double>(ranks[0].memory.param_bytes + ranks[0].memory.grad_bytes +
                                      ranks[0].memory.optimizer_bytes),
                  formula[stage], ranks[0].memory.bucket_bytes);
    }
  }
}

TEST(TrainerZero, CommunicationVolumeAsTheZeroPaper) {
  for (int N : {2, 4}) {
    double bytes[4];
    for (int stage = 0; stage <= 3; ++stage) bytes[stage] = static_cast<double>(train(N, static_cast<ZeroStage>(stage), 1, 2)[0].step_bytes);
    const double psi_bytes = 4.0 * static_cast<double>(build_gpt_param_table(tiny(ZeroStage::kNone).model).numel());
    EXPECT_NEAR(bytes[0] / (2 * psi_bytes), 1.0, 0.01) << "stage 0 is one all-reduce of the gradients";
    EXPECT_NEAR(bytes[1] / bytes[0], 1.0, 0.05);
    EXPECT_NEAR(bytes[2] / bytes[0], 1.0, 0.05);
    EXPECT_NEAR(bytes[3] / bytes[0], 1.5, 0.1);
    std::printf("  N=%d logical bytes per step / all-reduce volume: stage 1 %.3f, stage 2 %.3f, stage 3 %.3f\n", N,
                bytes[1] / bytes[0], bytes[2] / bytes[0], bytes[3] / bytes[0]);
  }
}

TEST(TrainerZero, EveryStageMatchesTheSingleProcess) {
  const int N = 3, accum = 2, steps = 5;
  const RankResult ref = train(1, ZeroStage::kNone, N * accum, steps)[0];
  for (int stage = 0; stage <= 3; ++stage) {
    const auto ranks = train(N, static_cast<ZeroStage>(stage), accum, steps);
    double worst = 0.0;
    for (int s = 0; s < steps; ++s) worst = std::max(worst, std::fabs(ranks[0].losses[s] - ref.losses[s]) / ref.losses[s]);
    EXPECT_LE(worst, 1e-5) << "stage " << stage;
    for (const RankResult& r : ranks) EXPECT_EQ(r.params, ranks[0].params) << "ranks disagree";
    std::printf("  stage %d, %d thread-ranks x accumulation %d: max loss rel diff %.2e\n", stage, N, accum, worst);
  }
}

TEST(TrainerZero, LlamaEveryStageMatchesTheSingleProcess) {
  const int N = 2, accum = 2, steps = 5;
  const RankResult ref = train(1, ZeroStage::kNone, N * accum, steps, /*llama=*/true)[0];
  for (int stage = 0; stage <= 3; ++stage) {
    const auto ranks = train(N, static_cast<ZeroStage>(stage), accum, steps, /*llama=*/true);
    double worst = 0.0;
    for (int s = 0; s < steps; ++s) worst = std::max(worst, std::fabs(ranks[0].losses[s] - ref.losses[s]) / ref.losses[s]);
    EXPECT_LE(worst, 1e-5) << "stage " << stage;
    for (const RankResult& r : ranks) EXPECT_EQ(r.params, ranks[0].params) << "ranks disagree";
    std::printf("  llama, stage %d, dp %d x accumulation %d: max loss rel diff %.2e\n", stage, N, accum, worst);
  }
}

}  // namespace
}  // namespace zt
