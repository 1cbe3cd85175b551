// The estimator against what the Trainer allocates: parameters, gradients, optimizer state
// and activations byte for byte, buffers within the bound, for ZeRO stages 0-3 on 1 and
// 3 thread-ranks (3 does not divide the parameter count: the last shard is shorter),
// AdamW and SGD with momentum, with and without activation checkpointing.
#include "engine/memory_estimate.h"
#include "parallel/zero/partition.h"

#include <gtest/gtest.h>

#include <vector>

#include "comm/thread_world.h"
#include "engine/parallel_setup.h"
#include "testing/synthetic_data.h"

namespace zt {
namespace {

TrainerOptions options(ZeroStage stage, OptimizerKind opt, bool checkpoint) {
  TrainerOptions o;
  o.model = testing::tiny_gpt_config();
  o.micro_batch = 2;
  o.seq_len = 8;
  o.optimizer = opt;
  o.sgd.momentum = 0.9;
  o.zero.stage = stage;
  o.zero.reduce.bucket_elems = 700;
  o.zero.allgather_bucket_elems = 700;
  o.zero.fetch.prefetch_elems = 1400;
  o.zero.fetch.persistence_threshold = 100;
  if (checkpoint) o.checkpoint.assign(static_cast<size_t>(o.model.n_layer), true);
  return o;
}

// The estimate against what a Trainer that has taken a step holds.
void expect_same(const MemoryEstimate& e, const MemoryReport& m, const std::string& what) {
  EXPECT_EQ(e.param_bytes, m.param_bytes) << what;
  EXPECT_EQ(e.master_bytes, m.master_bytes) << what;
  EXPECT_EQ(e.grad_bytes, m.grad_bytes) << what;
  EXPECT_EQ(e.optimizer_bytes, m.optimizer_bytes) << what;
  EXPECT_EQ(e.activation_bytes, m.activation_bytes) << what;
  EXPECT_LE(m.bucket_bytes, e.buffer_bytes_max) << what;
}

void expect_estimate_matches(int N, const TrainerOptions& o) {
  ThreadWorld world(N, CommOptions{});
  const Status s = run_ranks(N, [&](int rank) -> Status {
    auto group = world.group(rank);
    ZT_ASSIGN_OR_RETURN(auto t, Trainer::create(o, group.get()));
    const testing::SyntheticStep data = testing::synthetic_step(o.model.vocab_size, o.seq_len, o.micro_batch, 1, rank, N,
                                                                0, 5);
    ZT_RETURN_IF_ERROR(t->step(data.micro_batches()).status());  // buckets and gather buffers reach their use
    ZT_ASSIGN_OR_RETURN(const MemoryEstimate e, estimate_rank_memory(o, N, rank, 1, 0));
    const MemoryReport m = t->memory();
    expect_same(e, m, "stage " + std::to_string(static_cast<int>(o.zero.stage)) + ", rank " + std::to_string(rank) +
                          " of " + std::to_string(N));
    return Status::OK();
  });
  ASSERT_TRUE(s.ok()) << s.to_string();
}

TEST(MemoryEstimate, MatchesTheTrainersArenasAtEveryStage) {
  for (int stage = 0; stage <= 3; ++stage) {
    for (int N : {1, 3}) {
      expect_estimate_matches(N, options(static_cast<ZeroStage>(stage), OptimizerKind::kAdamW, false));
    }
  }
  expect_estimate_matches(3, options(ZeroStage::kOptimizer, OptimizerKind::kSgd, false));
  expect_estimate_matches(1, options(ZeroStage::kNone, OptimizerKind::kAdamW, true));
  // DeepSpeed's default prefetch window (5e7 elements) holds the whole tiny model: ZeRO-3
  // then prefetches the backward's layers while the forward's are still held.
  TrainerOptions wide = options(ZeroStage::kParameters, OptimizerKind::kAdamW, false);
  wide.zero.fetch.prefetch_elems = 50'000'000;
  expect_estimate_matches(2, wide);
  if (cpu_backend().host()) {  // ZeRO++ qgZ's buffers (host code: not on the guarded test backend)
    TrainerOptions qgz = options(ZeroStage::kParameters, OptimizerKind::kAdamW, false);
    qgz.zero.reduce.quantized_gradients = true;
    expect_estimate_matches(3, qgz);
  }
}

// Expert parallelism (issue 30): each rank's table holds its experts, and from stage 1
// ZeRO partitions over the expert-data-parallel group (zero_group_place).
TEST(MemoryEstimate, MatchesTheTrainersArenasWithExpertParallelism) {
  for (int stage = 0; stage <= 2; ++stage) {
    TrainerOptions o = options(static_cast<ZeroStage>(stage), OptimizerKind::kAdamW, false);
    o.model = testing::tiny_config(true, 2, 32, 61, 8, 48);
    o.model.moe.num_experts = 4;
    o.model.moe.gate.k = 2;
    const int N = 4;
    ThreadWorld world(N, CommOptions{});
    const RankGrid grid = RankGrid::create(N, 1, N, 1, 2).value();
    const Status s = run_ranks(N, [&](int rank) -> Status {
      ParallelGroups groups = make_thread_groups(world, grid, rank);
      TrainerOptions mine = o;
      ZT_ASSIGN_OR_RETURN(mine.layout, layout_for_rank(o.model, grid, rank, StagePartition::kUniform));
      ZT_ASSIGN_OR_RETURN(auto t, Trainer::create(mine, &groups));
      const testing::SyntheticStep data = testing::synthetic_step(61, 8, 2, 1, rank, N, 0, 5);
      ZT_RETURN_IF_ERROR(t->step(data.micro_batches()).status());
      const ZeroGroupPlace z = zero_group_place(grid, rank, o.zero.stage);
      ZT_ASSIGN_OR_RETURN(const MemoryEstimate e, estimate_rank_memory(mine, z.size, z.rank, 1, 0));
      const MemoryReport m = t->memory();
      expect_same(e, m, "ep 2, stage " + std::to_string(stage) + ", rank " + std::to_string(rank));
      return Status::OK();
    });
    ASSERT_TRUE(s.ok()) << s.to_string();
  }
}

TEST(MemoryEstimate, MatchesTheTrainersArenasInMixedPrecisionAndTheFormulas) {
  for (DType t : {DType::kBF16, DType::kF16}) {
    for (int stage = 0; stage <= 3; ++stage) {
      for (int N : {1, 3}) {
        TrainerOptions o = options(static_cast<ZeroStage>(stage), OptimizerKind::kAdamW, false);
        o.backend = backend_for(Device::kCpu, t).value();
        expect_estimate_matches(N, o);
        // Per rank, with S its shard: 2Ψ compute + fp32 master, gradients and Adam moments.
        const size_t psi = build_gpt_param_table(o.model).numel();
        const Partition part(psi, N, 2);
        for (int r = 0; r < N; ++r) {
          const size_t S = part.shard(r).size();
          const size_t want[] = {2 * psi + 4 * psi + 4 * psi + 8 * psi, 2 * psi + 4 * S + 4 * psi + 8 * S,
                                 2 * psi + 4 * S + 4 * S + 8 * S, 2 * S + 4 * S + 4 * S + 8 * S};
          auto e = estimate_rank_memory(o, N, r, 1, 0);
          ASSERT_TRUE(e.ok());
          EXPECT_EQ(e->param_bytes + e->grad_bytes + e->optimizer_bytes, want[stage])
              << dtype_name(t) << " stage " << stage << " rank " << r << " of " << N;
        }
      }
    }
  }
}

// The CPU's f16 linear layers keep the largest weight widened (GPT-2 small: the tied
// embedding, 50257 x 768 floats); bf16 and fp32 keep none.
TEST(MemoryEstimate, CountsTheF16WidenedWeightOnTheCpu) {
  TrainerOptions o;
  o.model = GptConfig::gpt2_small();
  auto buffers = [&](DType t) {
    o.backend = backend_for(Device::kCpu, t).value();
    return estimate_rank_memory(o, 1, 0, 1, 0)->buffer_bytes_max;
  };
  const size_t bf16 = buffers(DType::kBF16);
  EXPECT_EQ(buffers(DType::kF16) - bf16, size_t{50257} * 768 * sizeof(float));
  EXPECT_EQ(buffers(DType::kF32), bf16);
}

TEST(MemoryEstimate, Bf16ActivationsOfGpt2SmallAreAtMost055OfFp32) {
  TrainerOptions o;
  o.model = GptConfig::gpt2_small();
  o.micro_batch = 8;
  o.seq_len = 128;
  const double fp32 = static_cast<double>(estimate_rank_memory(o, 1, 0, 1, 0)->activation_bytes);
  o.backend = backend_for(Device::kCpu, DType::kBF16).value();
  const double bf16 = static_cast<double>(estimate_rank_memory(o, 1, 0, 1, 0)->activation_bytes);
  // Every activation is bf16; only LayerNorm statistics, losses and the cross-entropy's
  // row statistics (fp32, O(B T) per layer) and 64-byte alignment keep it above 0.5.
  EXPECT_LE(bf16 / fp32, 0.55);
  EXPECT_GE(bf16 / fp32, 0.5);
  std::printf("  GPT-2 small, B=8 T=128: activations fp32 %.1f MiB, bf16 %.1f MiB, ratio %.4f\n", fp32 / 1048576,
              bf16 / 1048576, bf16 / fp32);
}

TEST(MemoryEstimate, FollowsTheZeroFormulasForGpt2Small) {
  TrainerOptions o;
  o.model = GptConfig::gpt2_small();
  o.micro_batch = 1;
  o.seq_len = 64;
  const double psi = static_cast<double>(o.model.num_parameters());
  for (int stage = 0; stage <= 3; ++stage) {
    o.zero.stage = static_cast<ZeroStage>(stage);
    auto e = estimate_rank_memory(o, 8, 0, 1, 0);
    ASSERT_TRUE(e.ok()) << e.status().to_string();
    // 16 psi, 4 psi + 4 psi + 8 psi / 8, 4 psi + 12 psi / 8, 16 psi / 8 (the first shard is a ceiling).
    const double want[] = {16 * psi, 8 * psi + 8 * psi / 8, 4 * psi + 12 * psi / 8, 16 * psi / 8};
    const double got = static_cast<double>(e->param_bytes + e->grad_bytes + e->optimizer_bytes);
    EXPECT_NEAR(got, want[stage], 16.0 * 8) << "stage " << stage;
  }
  o.layout.tp_size = 1;
  EXPECT_FALSE(estimate_rank_memory(o, 8, 8, 1, 0).ok());
}

TEST(MemoryEstimate, RefusesStageTwoWithAPipeline) {
  TrainerOptions o;
  o.model = testing::tiny_gpt_config();
  o.zero.stage = ZeroStage::kGradients;
  EXPECT_FALSE(estimate_rank_memory(o, 1, 0, 2, 0).ok());
}

}  // namespace
}  // namespace zt
