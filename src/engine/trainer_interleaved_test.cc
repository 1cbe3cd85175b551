// Interleaved 1F1B (Megatron's virtual pipeline stages, issue 31) in the Trainer, ranks as
// threads: 2 chunks per rank at pp 2 and pp 4 against plain 1F1B at the same pp, for GPT-2
// (tied head: the embedding on rank 0's first chunk, its copy on the last rank's last
// chunk) and a grouped-query Llama, in fp32 and bf16, with and without activation
// checkpointing and with dp 2 under ZeRO-1; evaluation through the chunks; the refusals;
// and the activation estimate against the arena.
//
// Exactness. Each block computes the same rows with the same kernels wherever it lives,
// each chunk runs its micro-batches' backwards in micro-batch order as 1F1B does, and the
// tied gradients are summed by the same two ranks; so the losses and every parameter's
// gradient are the same bits as plain 1F1B. Only the gradient norm's sum of squares is
// taken in another grouping (each rank sums its own tensors, then the pipeline sums the
// ranks), so the norm may differ in its last bits: 1e-12 relative, far below what AdamW
// without clipping would notice (the norm only reports). Against the single process the
// bounds are the pipeline tests' (trainer_model_parallel_test.cc): 1e-5 on the loss.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
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

constexpr int kVocab = 61, kSeq = 8, kMicro = 2, kSteps = 4;

struct Case {
  int pp = 1, v = 1, dp = 1;
  int micro_batches = 8;  // per data-parallel replica and step
  bool llama = false;
  bool checkpoint = false;
  DType dtype = DType::kF32;
  ZeroStage stage = ZeroStage::kNone;
  bool moe = false;
  PipeScheduleKind schedule = PipeScheduleKind::k1F1B;
};

TrainerOptions options_for(const Case& c) {
  TrainerOptions o;
  o.model = testing::tiny_config(c.llama, 8, 32, kVocab, kSeq, 48);
  if (c.moe) {
    o.model.moe.num_experts = 2;
    o.model.moe.intermediate_size = 16;
  }
  o.micro_batch = kMicro;
  o.seq_len = kSeq;
  o.micro_batches = c.micro_batches;
  o.pipe_schedule = c.schedule;
  o.schedule.base_lr = 3e-3;
  o.gradient_clipping = 0.0;  // the norm only reports (see the header)
  o.zero.stage = c.stage;
  o.backend = backend_for(Device::kCpu, c.dtype).value();
  if (c.checkpoint) o.checkpoint.assign(static_cast<size_t>(o.model.n_layer), true);
  return o;
}

struct PipeRun {
  std::vector<double> losses, norms, evals;  // rank 0's
  std::map<std::string, std::vector<float>> grads;  // by tensor name, after the last step (dp 1)
  std::vector<size_t> activation_bytes, estimated_bytes;  // per rank
  std::vector<size_t> buffer_bytes, buffer_bound;         // per rank: held, and the estimate's bound
};

void keep_grads(Trainer& t, std::mutex& mu, PipeRun* r) {
  std::vector<float> g(t.grads().size());
  t.backend().copy_to_host(g.data(), t.grads().data(), g.size() * sizeof(float));
  std::lock_guard<std::mutex> lock(mu);
  for (const TensorSpec& s : t.param_table().specs()) {
    r->grads.emplace(s.name, std::vector<float>(g.begin() + static_cast<ptrdiff_t>(s.offset),
                                                g.begin() + static_cast<ptrdiff_t>(s.offset + s.numel)));
  }
}

StatusOr<PipeRun> train(const Case& c) {
  const int N = c.pp * c.dp;
  ThreadWorld world(N, CommOptions{});
  const RankGrid grid = RankGrid::create(N, 1, c.dp, c.pp).value();
  PipeRun r;
  r.activation_bytes.resize(static_cast<size_t>(N));
  r.estimated_bytes.resize(static_cast<size_t>(N));
  r.buffer_bytes.resize(static_cast<size_t>(N));
  r.buffer_bound.resize(static_cast<size_t>(N));
  std::mutex mu;
  const Status st = run_ranks(N, [&](int rank) -> Status {
    ParallelGroups groups = make_thread_groups(world, grid, rank);
    TrainerOptions o = options_for(c);
    ZT_ASSIGN_OR_RETURN(o.layout, layout_for_rank(o.model, grid, rank, StagePartition::kUniform, c.v));
    ZT_ASSIGN_OR_RETURN(auto t, Trainer::create(o, &groups));
    const int dp_rank = grid.coord(rank).dp;
    for (int step = 0; step < kSteps; ++step) {
      const testing::SyntheticStep data =
          testing::synthetic_step(kVocab, kSeq, kMicro, c.micro_batches, dp_rank, c.dp, step, 17);
      ZT_ASSIGN_OR_RETURN(const StepStats stats, t->step(data.micro_batches()));
      if (rank == 0) r.losses.push_back(stats.loss), r.norms.push_back(stats.grad_norm);
    }
    if (c.dp == 1) keep_grads(*t, mu, &r);  // under ZeRO-1 each rank keeps its partition's reduced gradients only
    const testing::SyntheticStep held_out = testing::synthetic_step(kVocab, kSeq, kMicro, 4, 0, 1, 99, 17);
    ZT_ASSIGN_OR_RETURN(const double eval, t->evaluate(held_out.micro_batches()));
    if (rank == 0) r.evals.push_back(eval);
    const size_t i = static_cast<size_t>(rank);
    r.activation_bytes[i] = t->memory().activation_bytes;
    ZT_ASSIGN_OR_RETURN(const MemoryEstimate e, estimate_rank_memory(o, c.dp, dp_rank, c.pp, grid.coord(rank).pp));
    r.estimated_bytes[i] = e.activation_bytes;
    r.buffer_bytes[i] = t->memory().bucket_bytes;
    r.buffer_bound[i] = e.buffer_bytes_max;
    return Status::OK();
  });
  if (!st.ok()) return st;
  return r;
}

double worst_rel(const std::vector<double>& a, const std::vector<double>& b) {
  double w = a.size() == b.size() ? 0.0 : 1.0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) w = std::max(w, std::fabs(a[i] - b[i]) / std::fabs(b[i]));
  return w;
}

// Interleaved against plain 1F1B at the same pp: the same bits (see the header).
void expect_same_as_1f1b(Case c, const std::string& what) {
  Case plain = c;
  plain.v = 1;
  const StatusOr<PipeRun> ref = train(plain), got = train(c);
  ASSERT_TRUE(ref.ok()) << what << ": " << ref.status().to_string();
  ASSERT_TRUE(got.ok()) << what << ": " << got.status().to_string();
  EXPECT_EQ(got->losses, ref->losses) << what;
  EXPECT_EQ(got->evals, ref->evals) << what;
  EXPECT_LE(worst_rel(got->norms, ref->norms), 1e-12) << what;
  ASSERT_EQ(got->grads.size(), ref->grads.size()) << what;
  for (const auto& [name, g] : ref->grads) EXPECT_EQ(got->grads.at(name), g) << what << ": " << name;
  EXPECT_EQ(got->activation_bytes, got->estimated_bytes) << what << ": the estimate is the arena";
  for (size_t i = 0; i < got->buffer_bytes.size(); ++i) {
    EXPECT_GT(got->buffer_bytes[i], 0u) << what << ": rank " << i << " holds gradient hand-off buffers";
    EXPECT_LE(got->buffer_bytes[i], got->buffer_bound[i]) << what << ": rank " << i;
  }
  std::printf("  %-36s loss %.6f (same bits as 1F1B), activations rank 0 %zu B (1F1B %zu B)\n", what.c_str(),
              got->losses.back(), got->activation_bytes[0], ref->activation_bytes[0]);
}

TEST(Interleaved, TwoChunksMatchOneFOneBBitForBit) {
  for (int pp : {2, 4}) {
    for (bool llama : {false, true}) {
      Case c;
      c.pp = pp;
      c.v = 2;
      c.llama = llama;
      expect_same_as_1f1b(c, std::string(llama ? "Llama" : "GPT-2") + " pp " + std::to_string(pp) + " v 2");
    }
  }
}

TEST(Interleaved, MatchesTheSingleProcess) {
  Case single;
  single.micro_batches = 8;
  Case c;
  c.pp = 4;
  c.v = 2;
  const StatusOr<PipeRun> ref = train(single), got = train(c);
  ASSERT_TRUE(ref.ok() && got.ok());
  EXPECT_LE(worst_rel(got->losses, ref->losses), 1e-5);
  EXPECT_LE(worst_rel(got->evals, ref->evals), 1e-5);
}

TEST(Interleaved, CheckpointingBf16AndZeroOneWithDataParallel) {
  Case ckpt;
  ckpt.pp = 2;
  ckpt.v = 2;
  ckpt.checkpoint = true;
  expect_same_as_1f1b(ckpt, "pp 2 v 2, checkpointed");
  Case bf16 = ckpt;
  bf16.checkpoint = false;
  bf16.dtype = DType::kBF16;
  bf16.llama = true;
  expect_same_as_1f1b(bf16, "Llama pp 2 v 2, bf16");
  Case zero1;
  zero1.pp = 2;
  zero1.v = 2;
  zero1.dp = 2;
  zero1.micro_batches = 4;
  zero1.stage = ZeroStage::kOptimizer;
  expect_same_as_1f1b(zero1, "dp 2 x pp 2 v 2, ZeRO-1");
}

// Three chunks, and a micro-batch count equal to pp (Megatron's all-warm-up case, where the
// head keeps one set of activations per slot).
TEST(Interleaved, ThreeChunksAndAllWarmUp) {
  Case three;
  three.pp = 2;
  three.v = 3;
  three.micro_batches = 4;
  expect_same_as_1f1b(three, "pp 2 v 3");
  Case warm;
  warm.pp = 2;
  warm.v = 2;
  warm.micro_batches = 2;
  expect_same_as_1f1b(warm, "pp 2 v 2, M = pp");
}

TEST(Interleaved, RefusesWhatItDoesNotRun) {
  auto refusal = [](Case c) {
    const StatusOr<PipeRun> r = train(c);
    return r.ok() ? std::string("accepted") : r.status().to_string();
  };
  Case odd;
  odd.pp = 2;
  odd.v = 2;
  odd.micro_batches = 3;
  EXPECT_NE(refusal(odd).find("multiple of the pipeline stages"), std::string::npos) << refusal(odd);
  Case gpipe = odd;
  gpipe.micro_batches = 4;
  gpipe.schedule = PipeScheduleKind::kGPipe;
  EXPECT_NE(refusal(gpipe).find("gpipe"), std::string::npos) << refusal(gpipe);
  Case moe = gpipe;
  moe.schedule = PipeScheduleKind::k1F1B;
  moe.moe = true;
  EXPECT_NE(refusal(moe).find("experts"), std::string::npos) << refusal(moe);
  Case deep = moe;
  deep.moe = false;
  deep.pp = 4;
  deep.v = 4;  // 16 virtual stages for 8 blocks
  EXPECT_NE(refusal(deep).find("/parallel/virtual_stages"), std::string::npos) << refusal(deep);
}

}  // namespace
}  // namespace zt
