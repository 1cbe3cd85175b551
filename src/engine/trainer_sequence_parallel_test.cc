// Ulysses sequence parallelism (issue 31) in the Trainer, ranks as threads: sp 2 and 4,
// alone and with dp 2 under ZeRO-3, for GPT-2 and a grouped-query Llama (4 heads, 2 kv
// heads: at sp 2 q, k and v travel unpacked, DeepSpeed's way; at sp 4, which does not divide
// the kv heads, packed with each kv head repeated for its query heads), against
// the single process on the same global batch; activation checkpointing under sp gives the
// same bits as without; flash attention under sp; the refusals; and the activation
// estimate against the arena.
//
// Tolerance (fp32). The sequence-parallel ranks compute every token's forward and input
// gradients with the same kernels on the same rows as the single process (the exchanges
// only permute values; attention sees the whole sequence for its heads); what differs is
// the parameter gradients' sum over tokens: each rank sums its Tl tokens, then the ranks'
// sums are added, an fp32 reassociation of a few units of 2^-24 relative. That is the same
// perturbation data parallelism makes, so the bounds are the data- and model-parallel
// tests': 1e-5 on the loss and 1e-4 on the gradient norm over five AdamW steps (Adam's
// m / sqrt(v) amplifies the reassociation in near-zero gradients, hence the norm's wider
// bound).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <mutex>
#include <string>
#include <vector>

#include "comm/thread_world.h"
#include "engine/memory_estimate.h"
#include "engine/parallel_setup.h"
#include "engine/trainer.h"
#include "testing/synthetic_data.h"

namespace zt {
namespace {

constexpr int kVocab = 61, kSeq = 8, kMicro = 2;

struct SpCase {
  int sp = 1, dp = 1;  // dp: the data-parallel ranks proper (the grid's dp is dp x sp)
  ZeroStage stage = ZeroStage::kNone;
  bool llama = false;
  bool checkpoint = false;
  DType dtype = DType::kF32;
  bool flash = false;  // training.attention "flash"
  int pp = 1;          // pipeline stages (1F1B, uniform); each stage's ranks form their own sp groups
};

TrainerOptions options_for(const SpCase& c) {
  TrainerOptions o;
  o.model = testing::tiny_config(c.llama, 3, 32, kVocab, kSeq, 48);
  o.micro_batch = kMicro;
  o.seq_len = kSeq;
  o.schedule.base_lr = 3e-3;
  o.zero.stage = c.stage;
  o.zero.reduce.bucket_elems = 5000;
  o.zero.allgather_bucket_elems = 5000;
  o.zero.fetch.persistence_threshold = 0;
  o.backend = backend_for(Device::kCpu, c.dtype).value();
  if (c.checkpoint) o.checkpoint.assign(static_cast<size_t>(o.model.n_layer), true);
  o.flash_attention = c.flash;
  return o;
}

// 16-bit runs: SGD without momentum at a small step (trainer_precision_test.cc: the
// comparison then measures the layouts' arithmetic, not Adam's or chaos' amplification).
TrainerOptions sixteen_bit(const SpCase& c) {
  TrainerOptions o = options_for(c);
  o.optimizer = OptimizerKind::kSgd;
  o.sgd.momentum = 0.0;
  o.schedule.base_lr = o.sgd.lr = 0.01;
  o.gradient_clipping = 0.0;
  o.loss_scaler.initial_scale_power = 12;
  o.loss_scaler.hysteresis = 1;
  o.loss_scaler.loss_scale_window = 3;
  return o;
}

struct SpRun {
  std::vector<double> losses, norms;  // rank 0's
  std::vector<MemoryReport> memory;   // every rank's
  int64_t sp_bytes = 0;               // rank 0's logical bytes on its sp group, the whole run
  Status status;
};

// `steps` steps with `accum` micro-batches per data-parallel rank.
SpRun train(const SpCase& c, int accum, int steps, const TrainerOptions* given = nullptr) {
  const int N = c.sp * c.dp * c.pp;
  ThreadWorld world(N, CommOptions{});
  const RankGrid grid = RankGrid::create(N, 1, c.sp * c.dp, c.pp, 1, c.sp).value();
  SpRun r;
  r.memory.resize(static_cast<size_t>(N));
  std::mutex mu;
  r.status = run_ranks(N, [&](int rank) -> Status {
    ParallelGroups groups = make_thread_groups(world, grid, rank);
    TrainerOptions o = given != nullptr ? *given : options_for(c);
    o.micro_batches = accum;
    ZT_ASSIGN_OR_RETURN(o.layout, layout_for_rank(o.model, grid, rank, StagePartition::kUniform));
    ZT_ASSIGN_OR_RETURN(auto t, Trainer::create(o, &groups));
    for (int step = 0; step < steps; ++step) {
      const testing::SyntheticStep data =
          testing::synthetic_step(kVocab, kSeq, kMicro, accum, grid.data_rank(rank), c.dp, step, 7);
      ZT_ASSIGN_OR_RETURN(const StepStats st, t->step(data.micro_batches()));
      if (rank == 0) {  // the loss is summed over the stages: every rank reports it
        std::lock_guard<std::mutex> lock(mu);
        r.losses.push_back(st.loss);
        r.norms.push_back(st.grad_norm);
      }
    }
    r.memory[static_cast<size_t>(rank)] = t->memory();
    if (rank == 0 && groups.sp != nullptr) r.sp_bytes = groups.sp->stats().total_logical_bytes();
    return Status::OK();
  });
  return r;
}

double worst_rel(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size() || a.empty()) return 1.0;
  double w = 0.0;
  for (size_t i = 0; i < a.size(); ++i) w = std::max(w, std::fabs(a[i] - b[i]) / std::fabs(b[i]));
  return w;
}

std::string name(const SpCase& c) {
  return std::string(c.llama ? "llama" : "gpt2") + " sp " + std::to_string(c.sp) + " x dp " + std::to_string(c.dp) +
         (c.pp > 1 ? " x pp " + std::to_string(c.pp) : std::string()) + " ZeRO-" + std::to_string(static_cast<int>(c.stage));
}

TEST(SequenceParallel, MatchesTheSingleProcessOnTheSameGlobalBatch) {
  constexpr int kSteps = 5, kAccum = 2;
  for (bool llama : {false, true}) {
    SpCase single;
    single.llama = llama;
    const SpRun ref = train(single, kAccum * 2, kSteps);  // the whole global batch of dp 2
    const SpRun ref1 = train(single, kAccum, kSteps);     // of dp 1
    ASSERT_TRUE(ref.status.ok() && ref1.status.ok()) << ref.status.to_string() << ref1.status.to_string();
    for (const SpCase& c : {SpCase{2, 1, ZeroStage::kNone, llama}, SpCase{4, 1, ZeroStage::kNone, llama},
                            SpCase{2, 2, ZeroStage::kParameters, llama}, SpCase{4, 2, ZeroStage::kParameters, llama}}) {
      const SpRun got = train(c, kAccum, kSteps);
      ASSERT_TRUE(got.status.ok()) << name(c) << ": " << got.status.to_string();
      const SpRun& want = c.dp == 2 ? ref : ref1;
      EXPECT_LE(worst_rel(got.losses, want.losses), 1e-5) << name(c);
      EXPECT_LE(worst_rel(got.norms, want.norms), 1e-4) << name(c);
      std::printf("  %-28s max loss rel diff %.2e, max grad-norm rel diff %.2e\n", name(c).c_str(),
                  worst_rel(got.losses, want.losses), worst_rel(got.norms, want.norms));
    }
  }
}

// bf16 and fp16: each step's loss and gradient-norm difference from the single process in
// the same precision is within the single process's own fp32-vs-16-bit difference over the
// run (the ordering argument of trainer_precision_test.cc: a layout's reassociation starts
// at 2^-24, the precision's rounding at the 16-bit unit roundoff, and both grow alike).
TEST(SequenceParallel, SixteenBitWithinThePrecisionGap) {
  constexpr int kSteps = 3, kAccum = 2;
  auto diff = [](const SpRun& x, const SpRun& y, size_t s) {
    return std::max(std::fabs(x.losses[s] - y.losses[s]) / y.losses[s], std::fabs(x.norms[s] - y.norms[s]) / y.norms[s]);
  };
  for (bool llama : {false, true}) {
    for (DType t : {DType::kBF16, DType::kF16}) {
      SpCase one{1, 1, ZeroStage::kNone, llama, false, DType::kF32};
      const TrainerOptions o32 = sixteen_bit(one);
      const SpRun fp32 = train(one, kAccum * 2, kSteps, &o32);
      one.dtype = t;
      const TrainerOptions o16 = sixteen_bit(one);
      const SpRun ref = train(one, kAccum * 2, kSteps, &o16);
      ASSERT_TRUE(fp32.status.ok() && ref.status.ok()) << fp32.status.to_string() << ref.status.to_string();
      double gap = 0.0;
      for (size_t s = 0; s < kSteps; ++s) gap = std::max(gap, diff(ref, fp32, s));
      ASSERT_GT(gap, 0.0);
      for (const SpCase& c : {SpCase{2, 2, ZeroStage::kNone, llama, false, t},
                              SpCase{2, 2, ZeroStage::kParameters, llama, true, t},
                              SpCase{4, 1, ZeroStage::kGradients, llama, false, t}}) {
        const TrainerOptions o = sixteen_bit(c);
        const SpRun got = train(c, c.dp == 2 ? kAccum : kAccum * 2, kSteps, &o);
        ASSERT_TRUE(got.status.ok()) << name(c) << ": " << got.status.to_string();
        double worst = 0.0;
        for (size_t s = 0; s < kSteps; ++s) {
          EXPECT_LE(diff(got, ref, s), gap) << name(c) << " " << dtype_name(t) << " step " << s;
          worst = std::max(worst, diff(got, ref, s) / gap);
        }
        std::printf("  %-28s %s%s: loss/norm diff <= %.3f of the precision gap (%.2e)\n", name(c).c_str(), dtype_name(t),
                    c.checkpoint ? " checkpointed" : "", worst, gap);
      }
    }
  }
}

// Pipeline stages under sp: each stage's ranks exchange within their own sp group, and a
// stage hands its rank's tokens to the same sp rank of the next stage (same dp coordinate).
TEST(SequenceParallel, WithPipelineStagesMatchesTheSingleProcess) {
  constexpr int kSteps = 4, kAccum = 4;
  for (bool llama : {false, true}) {
    SpCase single;
    single.llama = llama;
    const SpRun ref = train(single, kAccum, kSteps);
    SpCase c{2, 1, ZeroStage::kOptimizer, llama};
    c.pp = 2;
    const SpRun got = train(c, kAccum, kSteps);
    ASSERT_TRUE(ref.status.ok() && got.status.ok()) << ref.status.to_string() << got.status.to_string();
    EXPECT_LE(worst_rel(got.losses, ref.losses), 1e-5) << name(c);
    EXPECT_LE(worst_rel(got.norms, ref.norms), 1e-4) << name(c);
    std::printf("  %-28s max loss rel diff %.2e, max grad-norm rel diff %.2e\n", name(c).c_str(),
                worst_rel(got.losses, ref.losses), worst_rel(got.norms, ref.norms));
  }
}

// q, k, v travel unpacked where sp divides the kv heads: the GQA Llama (2 kv heads of 4)
// moves 4C + 4 kv_dim = 6C per token and block where the same model with 4 kv heads moves
// 8C (forward q, k, v and the output; backward the output's gradient and dq, dk, dv). Packed,
// both would move 8C. The losses are the same bits either way (a permutation, and each kv
// head's gradient summed in the same order).
TEST(SequenceParallel, GqaTravelsUnpackedWhereTheKvHeadsDivide) {
  SpCase c{2, 1, ZeroStage::kNone, true};
  const SpRun gqa = train(c, 1, 1);
  TrainerOptions mha = options_for(c);
  mha.model.n_kv_head = 4;
  const SpRun full = train(c, 1, 1, &mha);
  ASSERT_TRUE(gqa.status.ok() && full.status.ok()) << gqa.status.to_string() << full.status.to_string();
  ASSERT_GT(full.sp_bytes, 0);
  EXPECT_EQ(gqa.sp_bytes * 4, full.sp_bytes * 3);
}

// Recomputing a block reruns its exchanges and kernels on the same inputs: the same bits.
TEST(SequenceParallel, CheckpointedBlocksGiveTheSameBits) {
  for (bool llama : {false, true}) {
    SpCase plain{2, 1, ZeroStage::kGradients, llama};
    SpCase ckpt = plain;
    ckpt.checkpoint = true;
    const SpRun a = train(plain, 2, 3), b = train(ckpt, 2, 3);
    ASSERT_TRUE(a.status.ok() && b.status.ok()) << a.status.to_string() << b.status.to_string();
    EXPECT_EQ(a.losses, b.losses);
    EXPECT_EQ(a.norms, b.norms);
    EXPECT_LT(b.memory[0].activation_bytes, a.memory[0].activation_bytes);
  }
}

// What sequence parallelism does not take, refused with the key and the rule.
TEST(SequenceParallel, RefusesWhatItCannotSplit) {
  SpCase c{4, 1};
  TrainerOptions o = options_for(c);
  o.seq_len = 6;  // 4 does not divide it
  o.model.n_positions = 8;
  SpRun r = train(c, 1, 1, &o);
  EXPECT_EQ(r.status.message(), "/sequence_parallel_size: 4 does not divide the sequence length 6");
  o = options_for(c);
  o.model = testing::tiny_config(false, 3, 36, kVocab, kSeq, 48);
  o.model.n_head = 6;  // 4 does not divide the heads
  r = train(c, 1, 1, &o);
  EXPECT_EQ(r.status.message(),
            "/sequence_parallel_size: 4 does not divide n_head=6 (each rank attends with n_head / sp heads over the "
            "whole sequence)");
  o = options_for(c);
  o.efficiency.layer_drop.enabled = true;
  r = train(c, 1, 1, &o);
  EXPECT_EQ(r.status.code(), StatusCode::kUnimplemented);
  EXPECT_NE(r.status.message().find("progressive layer drop"), std::string::npos) << r.status.message();
}

// Flash attention (kernels/cpu/flash_attention.h) reorders attention's sums over keys: the
// single process with it is within the bounds above of the materialized one, and sp with it
// of the single process with it (the Ulysses exchange under flash keeps O in the head layout
// for the backward).
TEST(SequenceParallel, FlashAttentionMatchesTooAndKeepsNoSquare) {
  constexpr int kSteps = 5, kAccum = 2;
  for (bool llama : {false, true}) {
    SpCase plain{1, 1, ZeroStage::kNone, llama};
    SpCase flash = plain;
    flash.flash = true;
    const SpRun a = train(plain, kAccum * 2, kSteps), b = train(flash, kAccum * 2, kSteps);
    ASSERT_TRUE(a.status.ok() && b.status.ok()) << a.status.to_string() << b.status.to_string();
    EXPECT_LE(worst_rel(b.losses, a.losses), 1e-5);
    EXPECT_LE(worst_rel(b.norms, a.norms), 1e-4);
    EXPECT_LT(b.memory[0].activation_bytes, a.memory[0].activation_bytes);
    for (const SpCase& c : {SpCase{2, 2, ZeroStage::kParameters, llama, false, DType::kF32, true},
                            SpCase{4, 1, ZeroStage::kNone, llama, true, DType::kF32, true}}) {
      const SpRun got = train(c, c.dp == 2 ? kAccum : kAccum * 2, kSteps);
      ASSERT_TRUE(got.status.ok()) << name(c) << ": " << got.status.to_string();
      EXPECT_LE(worst_rel(got.losses, b.losses), 1e-5) << name(c);
      EXPECT_LE(worst_rel(got.norms, b.norms), 1e-4) << name(c);
      std::printf("  %-28s flash%s: max loss rel diff %.2e, max grad-norm rel diff %.2e (flash vs materialized %.2e, %.2e)\n",
                  name(c).c_str(), c.checkpoint ? " checkpointed" : "", worst_rel(got.losses, b.losses),
                  worst_rel(got.norms, b.norms), worst_rel(b.losses, a.losses), worst_rel(b.norms, a.norms));
    }
  }
}

// A rank holds 1/sp of the tokens of every activation but attention's saved state, which
// spans the whole sequence for n_head / sp heads; the estimate is the arena, byte for byte.
TEST(SequenceParallel, EstimateIsTheArena) {
  for (int v = 0; v < 4; ++v) {
    const bool ckpt = v % 2 == 1;
    SpCase c{4, 1, ZeroStage::kParameters, true, ckpt, DType::kF32, v >= 2};
    const SpRun r = train(c, 1, 1);
    ASSERT_TRUE(r.status.ok()) << r.status.to_string();
    const RankGrid grid = RankGrid::create(4, 1, 4, 1, 1, 4).value();
    TrainerOptions o = options_for(c);
    o.layout = layout_for_rank(o.model, grid, 1, StagePartition::kUniform).value();
    const MemoryEstimate e = estimate_rank_memory(o, 4, 1, 1, 0).value();
    EXPECT_EQ(e.activation_bytes, r.memory[1].activation_bytes) << (ckpt ? "checkpointed" : "plain") << " flash " << c.flash;
  }
}

}  // namespace
}  // namespace zt
