// Tensor, pipeline and 3D parallelism and activation checkpointing in one process
// (thread backend, ranks as threads): every layout against the single process on the
// same global batch, bit-identical gradients with checkpointing, and the memory each
// rank holds. Each exactness check runs for GPT-2 and for a grouped-query Llama (4 heads,
// 2 kv heads; untied vocabulary-parallel head, and tied across pipeline stages). The mpirun versions of the exactness checks are in tests/model_parallel/.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <mutex>
#include <vector>

#include "engine/memory_estimate.h"
#include "engine/parallel_setup.h"
#include "engine/trainer.h"
#include "testing/synthetic_data.h"

namespace zt {
namespace {

constexpr int kVocab = 61;

// kMoe: the Llama with experts in every block (DeepSpeed's top-2, capacity 1.25 so tokens
// drop, second-expert sampling with keyed Gumbel noise, l_aux coefficient 0.01); kMixtral: in every second block, Mixtral's
// routing with HF's balance loss (coefficient 0.02) and a gated shared expert.
enum class Family { kGpt2, kLlama, kLlamaTied, kMoe, kMixtral };

void add_experts(Family f, GptConfig* c) {
  MoeConfig& m = c->moe;
  m.num_experts = 4;
  m.intermediate_size = 24;
  m.gate.k = 2;
  m.gate.use_rts = false;
  m.gate.second_sampling = f == Family::kMoe;
  m.gate.min_capacity = 0;
  m.gate.capacity_factor = 1.25;
  m.aux_loss_coef = f == Family::kMoe ? 0.01 : 0.02;
  m.every = f == Family::kMoe ? 1 : 2;
  m.gate.routing = f == Family::kMoe ? MoeRouting::kDeepSpeed : MoeRouting::kMixtral;
  m.shared_intermediate_size = f == Family::kMixtral ? 16 : 0;  // with Qwen2-MoE's gated shared expert
}

GptConfig tiny_model(Family f = Family::kGpt2) {
  GptConfig c;
  if (f != Family::kGpt2) {
    c.set_family(ModelFamily::kLlama);
    c.n_kv_head = 2;  // tp = 2 holds one kv head and two query heads per rank
    c.intermediate_size = 48;
    c.tie_word_embeddings = f == Family::kLlamaTied;
  }
  if (f == Family::kMoe || f == Family::kMixtral) add_experts(f, &c);
  c.n_layer = 4;
  c.n_head = 4;
  c.n_embd = 32;
  c.vocab_size = kVocab;
  c.padded_vocab_size = 64;  // divisible by tp = 2, 4
  c.n_positions = 8;
  return c;
}

struct Layout3D {
  int tp = 1, dp = 1, pp = 1;
  int ep = 1;  // expert parallelism within dp
  ZeroStage stage = ZeroStage::kNone;
  PipeScheduleKind schedule = PipeScheduleKind::k1F1B;
  int micro_batches = 1;  // per data-parallel replica and step
  bool checkpoint = false;
  bool partition = false;
  Family family = Family::kGpt2;
  bool quantize_weights = false;  // compression_training: 4-bit attention and MLP weights in every forward
  bool host_stash = false;        // with checkpoint: cpu_checkpointing (moves only where memory is not the host's)
};

struct Result {
  std::vector<double> losses;        // rank 0's view of each step's loss
  std::vector<double> norms;
  std::vector<double> aux;           // MoE: each step's balance loss
  std::vector<std::vector<float>> grads;  // every rank's gradient arena after the last step (stage 0)
  std::vector<MemoryReport> memory;
  std::vector<size_t> numel;
  std::vector<MemoryEstimate> estimate;  // every rank's, from its options
};

Result train(const Layout3D& s, int steps) {
  const int N = s.tp * s.dp * s.pp;
  ThreadWorld world(N, CommOptions{});
  const RankGrid grid = RankGrid::create(N, s.tp, s.dp, s.pp, s.ep).value();
  Result r;
  r.grads.resize(static_cast<size_t>(N));
  r.memory.resize(static_cast<size_t>(N));
  r.numel.resize(static_cast<size_t>(N));
  r.estimate.resize(static_cast<size_t>(N));
  std::mutex mu;
  const Status st = run_ranks(N, [&](int rank) -> Status {
    ParallelGroups groups = make_thread_groups(world, grid, rank);
    TrainerOptions o;
    o.model = tiny_model(s.family);
    o.micro_batch = 2;
    o.seq_len = 8;
    o.schedule.base_lr = 3e-3;
    o.zero.stage = s.stage;
    o.zero.reduce.bucket_elems = 5000;
    o.zero.allgather_bucket_elems = 5000;
    o.pipe_schedule = s.schedule;
    o.micro_batches = s.micro_batches;
    ZT_ASSIGN_OR_RETURN(o.layout, layout_for_rank(o.model, grid, rank, StagePartition::kUniform));
    if (s.checkpoint) o.checkpoint.assign(static_cast<size_t>(o.model.n_layer), true);
    o.partition_activations = s.partition;
    o.activation_host_stash = s.host_stash;
    if (s.quantize_weights) {
      WeightQuantOptions& w = o.efficiency.compression.weight;
      w.enabled = w.in_forward = true;
      w.groups_of_modules.push_back({"wq1", {"attn", "mlp"}, 8, 4, 1});
    }
    ZT_ASSIGN_OR_RETURN(auto t, Trainer::create(o, &groups));
    const int dp_rank = grid.coord(rank).dp;
    for (int step = 0; step < steps; ++step) {
      const testing::SyntheticStep data = testing::synthetic_step(kVocab, 8, 2, s.micro_batches, dp_rank, s.dp, step, 11);
      ZT_ASSIGN_OR_RETURN(StepStats stats, t->step(data.micro_batches()));
      if (rank == 0) {
        std::lock_guard<std::mutex> lock(mu);
        r.losses.push_back(stats.loss);
        r.norms.push_back(stats.grad_norm);
        r.aux.push_back(stats.moe_aux_loss);
      }
    }
    const size_t i = static_cast<size_t>(rank);
    r.grads[i].resize(t->grads().size());  // through the backend: its arenas may not be host memory
    t->backend().copy_to_host(r.grads[i].data(), t->grads().data(), t->grads().size() * sizeof(float));
    r.memory[i] = t->memory();
    r.numel[i] = t->param_table().numel();
    ZT_ASSIGN_OR_RETURN(r.estimate[i], estimate_rank_memory(o, s.dp, grid.coord(rank).dp, s.pp, grid.coord(rank).pp));
    return Status::OK();
  });
  EXPECT_TRUE(st.ok()) << st.to_string();
  return r;
}

double worst_rel(const std::vector<double>& a, const std::vector<double>& b) {
  double w = 0.0;
  for (size_t i = 0; i < b.size() && i < a.size(); ++i) w = std::max(w, std::fabs(a[i] - b[i]) / std::fabs(b[i]));
  return a.size() == b.size() ? w : 1.0;
}

void expect_matches(const Layout3D& s, const char* what) {
  constexpr int kSteps = 5;
  Layout3D single;
  single.micro_batches = s.micro_batches * s.dp;
  single.family = s.family;
  single.quantize_weights = s.quantize_weights;
  const Result ref = train(single, kSteps);
  const Result got = train(s, kSteps);
  EXPECT_LE(worst_rel(got.losses, ref.losses), 1e-5) << what;
  EXPECT_LE(worst_rel(got.norms, ref.norms), 1e-4) << what;
  if (tiny_model(s.family).moe.enabled()) EXPECT_LE(worst_rel(got.aux, ref.aux), 1e-5) << what << ": balance loss";
  std::printf("  %-40s max loss rel diff %.2e, max grad-norm rel diff %.2e\n", what, worst_rel(got.losses, ref.losses),
              worst_rel(got.norms, ref.norms));
}

TEST(ModelParallel, TensorParallelMatchesSingleProcess) {
  for (int tp : {2, 4}) {
    Layout3D s;
    s.tp = tp;
    s.micro_batches = 2;
    expect_matches(s, tp == 2 ? "tp 2" : "tp 4");
  }
}

TEST(ModelParallel, PipelineMatchesSingleProcess) {
  for (int pp : {2, 4}) {
    for (auto kind : {PipeScheduleKind::kGPipe, PipeScheduleKind::k1F1B}) {
      Layout3D s;
      s.pp = pp;
      s.schedule = kind;
      s.micro_batches = 4;
      const std::string what = "pp " + std::to_string(pp) + " " + pipe_schedule_name(kind);
      expect_matches(s, what.c_str());
    }
  }
}

// Each stage reads its layers' quantized copies, as the single process does (the stages
// once bound the whole unquantized arena instead).
TEST(ModelParallel, PipelineWithWeightQuantizationMatchesSingleProcess) {
  if (!cpu_backend().host()) GTEST_SKIP() << "compression_training needs host memory (compression_test.cc tests the refusal)";
  Layout3D s;
  s.pp = 2;
  s.micro_batches = 4;
  s.quantize_weights = true;
  expect_matches(s, "pp 2, 4-bit weights in forward");
  Layout3D plain = s;
  plain.quantize_weights = false;
  EXPECT_NE(train(plain, 2).losses, train(s, 2).losses);  // the quantization is really on
}

TEST(ModelParallel, ThreeDWithZeroOneMatchesSingleProcess) {
  Layout3D s;
  s.tp = 2;
  s.dp = 2;
  s.pp = 2;
  s.stage = ZeroStage::kOptimizer;
  s.micro_batches = 2;
  expect_matches(s, "dp 2 x pp 2 x tp 2, ZeRO-1");
}

TEST(ModelParallel, LlamaTensorPipelineAnd3DMatchTheSingleProcess) {
  Layout3D tp;
  tp.family = Family::kLlama;
  tp.tp = 2;
  tp.micro_batches = 2;
  expect_matches(tp, "llama tp 2 (GQA, 1 kv head per rank)");
  for (Family f : {Family::kLlama, Family::kLlamaTied}) {
    Layout3D pp;
    pp.family = f;
    pp.pp = 2;
    pp.micro_batches = 4;
    expect_matches(pp, f == Family::kLlama ? "llama pp 2 1f1b" : "llama pp 2 1f1b, tied head");
  }
  Layout3D three;
  three.family = Family::kLlama;
  three.tp = 2;
  three.dp = 2;
  three.pp = 2;
  three.stage = ZeroStage::kOptimizer;
  three.micro_batches = 2;
  expect_matches(three, "llama dp 2 x pp 2 x tp 2, ZeRO-1");
}

// Experts in the model (issue 30) under data parallelism with every ZeRO stage, a pipeline
// with ZeRO-1 (DeepSpeed's l_aux summed over the stages' blocks): each micro-batch routes its
// own tokens, as the single process's same micro-batch does.
TEST(ModelParallel, MixtureOfExpertsMatchesSingleProcess) {
  for (Family f : {Family::kMoe, Family::kMixtral}) {
    const char* name = f == Family::kMoe ? "moe top-2" : "mixtral";
    for (int stage = 0; stage <= 3; ++stage) {
      Layout3D dp;
      dp.family = f;
      dp.dp = 2;
      dp.micro_batches = 2;
      dp.stage = static_cast<ZeroStage>(stage);
      expect_matches(dp, (std::string(name) + " dp 2, ZeRO-" + std::to_string(stage)).c_str());
    }
  }
  Layout3D pp;
  pp.family = Family::kMoe;
  pp.pp = 2;
  pp.dp = 2;
  pp.stage = ZeroStage::kOptimizer;
  pp.micro_batches = 4;
  expect_matches(pp, "moe top-2 dp 2 x pp 2 1f1b, ZeRO-1");
  // Tensor parallelism slices the attention and vocabulary; the MoE MLP (router, experts,
  // shared expert) is replicated on each tp rank, which computes it whole.
  for (Family f : {Family::kMoe, Family::kMixtral}) {
    Layout3D tp;
    tp.family = f;
    tp.tp = 2;
    tp.dp = 2;
    tp.stage = ZeroStage::kGradients;
    tp.micro_batches = 2;
    expect_matches(tp, f == Family::kMoe ? "moe top-2 dp 2 x tp 2, ZeRO-2" : "mixtral dp 2 x tp 2, ZeRO-2");
  }
  TrainerOptions last_stage;  // HF's balance loss spans every MoE block: refused on a stage holding some
  last_stage.model = tiny_model(Family::kMixtral);
  last_stage.seq_len = 8;
  last_stage.layout.first_block = 2;
  last_stage.layout.embedding = false;
  const auto refused = Trainer::create(last_stage);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("balance loss spans every MoE block"), std::string::npos)
      << refused.status().to_string();
}

// Expert parallelism (issue 30): each rank holds E/ep experts, tokens reach them by
// all-to-all, expert gradients are reduced over the expert-data-parallel group. Against the
// single process on the same global batch, for DeepSpeed top-2 and Mixtral routing with a
// shared expert; ep 2 and 4 with dp, with pipeline stages, and with checkpointing.
TEST(ModelParallel, ExpertParallelMatchesSingleProcess) {
  struct Case {
    Family f;
    int dp, ep, pp;
    bool checkpoint;
    int tp = 1;
    int stage = 0;
  };
  for (const Case& c : {Case{Family::kMoe, 2, 2, 1, false}, Case{Family::kMoe, 4, 2, 1, false},
                        Case{Family::kMoe, 2, 2, 1, false, 2}, Case{Family::kMoe, 2, 2, 2, false, 2},
                        Case{Family::kMoe, 4, 2, 1, false, 1, 1}, Case{Family::kMixtral, 4, 4, 1, false, 1, 2},
                        Case{Family::kMoe, 4, 2, 1, true, 1, 2}, Case{Family::kMoe, 4, 4, 1, false, 1, 3},
                        Case{Family::kMoe, 4, 2, 2, false, 1, 1},
                        Case{Family::kMoe, 4, 4, 1, true}, Case{Family::kMixtral, 4, 4, 1, false},
                        Case{Family::kMixtral, 2, 2, 1, true}, Case{Family::kMoe, 2, 2, 2, false}}) {
    Layout3D s;
    s.family = c.f;
    s.dp = c.dp;
    s.ep = c.ep;
    s.pp = c.pp;
    s.checkpoint = c.checkpoint;
    s.tp = c.tp;
    s.stage = static_cast<ZeroStage>(c.stage);
    s.micro_batches = c.pp > 1 ? 4 : 2;
    const std::string what = std::string(c.f == Family::kMoe ? "moe top-2" : "mixtral") + " dp " + std::to_string(c.dp) +
                             " ep " + std::to_string(c.ep) + (c.pp > 1 ? " x pp 2" : "") +
                             (c.tp > 1 ? " x tp 2" : "") + ", ZeRO-" + std::to_string(c.stage) +
                             (c.checkpoint ? ", checkpointed" : "");
    expect_matches(s, what.c_str());
  }
  // The forward is the same arithmetic as dp alone: the first step's loss is bit-identical.
  Layout3D dp;
  dp.family = Family::kMoe;
  dp.dp = 4;
  dp.micro_batches = 2;
  Layout3D ep = dp;
  ep.ep = 4;
  const Result a = train(dp, 1), b = train(ep, 1);
  EXPECT_EQ(a.losses, b.losses);
  // Each rank holds its quarter of the experts and everything else.
  const GptConfig cfg = tiny_model(Family::kMoe);
  size_t experts = 0;
  for (const TensorSpec& t : build_gpt_param_table(cfg).specs()) experts += t.expert >= 0 ? t.numel : 0;
  EXPECT_EQ(b.numel[0], build_gpt_param_table(cfg).numel() - experts * 3 / 4);
}

TEST(ModelParallel, ExpertParallelRefusesWhatItDoesNotBuild) {
  TrainerOptions o;
  o.model = tiny_model(Family::kMoe);
  o.seq_len = 8;
  o.layout.ep_size = 3;  // does not divide 4 experts
  auto bad = Trainer::create(o);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("must divide num_experts=4"), std::string::npos) << bad.status().to_string();
  const int N = 2;
  ThreadWorld world(N, CommOptions{});
  const RankGrid grid = RankGrid::create(N, 1, 2, 1, 2).value();
  const Status st = run_ranks(N, [&](int rank) -> Status {
    ParallelGroups groups = make_thread_groups(world, grid, rank);
    TrainerOptions z = o;
    z.optimizer = OptimizerKind::kOneBitAdam;  // compresses the dp exchange of whole tensors
    ZT_ASSIGN_OR_RETURN(z.layout, layout_for_rank(z.model, grid, rank, StagePartition::kUniform));
    auto t = Trainer::create(z, &groups);
    EXPECT_FALSE(t.ok());
    EXPECT_NE(t.status().message().find("expert parallelism"), std::string::npos) << t.status().to_string();
    return Status::OK();
  });
  EXPECT_TRUE(st.ok()) << st.to_string();
}

TEST(ModelParallel, CheckpointingGivesBitIdenticalGradients) {
  for (int run = 0; run < 5; ++run) {
    const int tp = run == 4 ? 1 : 1 + run % 2;
    Layout3D off;
    off.family = run == 4 ? Family::kMoe : run < 2 ? Family::kGpt2 : Family::kLlama;
    off.tp = tp;
    off.micro_batches = 2;
    Layout3D on = off;
    on.checkpoint = true;
    on.partition = tp > 1;
    const Result a = train(off, 3), b = train(on, 3);
    EXPECT_EQ(a.losses, b.losses) << "tp " << tp;
    for (size_t r = 0; r < a.grads.size(); ++r) {
      ASSERT_EQ(a.grads[r].size(), b.grads[r].size());
      EXPECT_EQ(0, std::memcmp(a.grads[r].data(), b.grads[r].data(), a.grads[r].size() * sizeof(float)))
          << "tp " << tp << " rank " << r << ": gradients differ with checkpointing";
    }
    std::printf("  checkpointing (%s, tp %d%s): activations %zu -> %zu bytes, gradients bit-identical\n",
                run == 4 ? "moe" : run < 2 ? "gpt2" : "llama", tp, tp > 1 ? ", partitioned" : "", a.memory[0].activation_bytes,
                b.memory[0].activation_bytes);
  }
}

// cpu_checkpointing on pipeline stages: on a backend whose memory is not the host's (the
// guarded_backend_training run) each stage keeps host entries for its own stashed blocks
// only, and 1F1B's interleaved micro-batches save, prefetch and load them; the same bits as
// checkpointing in the backend's memory, and the estimate's host bytes on every stage.
TEST(ModelParallel, HostActivationOffloadOnPipelineStagesIsBitIdentical) {
  for (auto kind : {PipeScheduleKind::kGPipe, PipeScheduleKind::k1F1B}) {
    Layout3D off;
    off.pp = 2;
    off.schedule = kind;
    off.micro_batches = 4;
    off.checkpoint = true;
    Layout3D on = off;
    on.host_stash = true;
    const Result a = train(off, 3), b = train(on, 3);
    EXPECT_EQ(a.losses, b.losses) << pipe_schedule_name(kind);
    for (size_t r = 0; r < a.grads.size(); ++r) {
      ASSERT_EQ(a.grads[r].size(), b.grads[r].size());
      EXPECT_EQ(0, std::memcmp(a.grads[r].data(), b.grads[r].data(), a.grads[r].size() * sizeof(float)))
          << pipe_schedule_name(kind) << " stage " << r;
      EXPECT_EQ(b.estimate[r].offload_buffer_bytes, b.memory[r].offload_buffer_bytes) << "stage " << r;
      EXPECT_EQ(b.estimate[r].activation_bytes, b.memory[r].activation_bytes) << "stage " << r;
      EXPECT_EQ(b.estimate[r].host_bytes, b.memory[r].host_bytes) << "stage " << r;
    }
    std::printf("  cpu_checkpointing, pp 2 %s: stage 0 holds %zu host bytes of stashed inputs\n",
                pipe_schedule_name(kind), b.memory[0].offload_buffer_bytes);
  }
}

TEST(ModelParallel, EachRankHoldsOnlyItsPart) {
  const size_t whole = build_gpt_param_table(tiny_model()).numel();
  Layout3D pp;
  pp.pp = 2;
  pp.micro_batches = 2;
  const Result p = train(pp, 1);
  // Stage 0: embeddings + blocks 0-1; stage 1: blocks 2-3 + ln_f + its copy of wte.
  const GptConfig c = tiny_model();
  const size_t wte = static_cast<size_t>(c.padded_vocab()) * c.n_embd, wpe = static_cast<size_t>(c.n_positions) * c.n_embd;
  const size_t block = 12 * 32 * 32 + 13 * 32;
  EXPECT_EQ(p.numel[0], wte + wpe + 2 * block);
  EXPECT_EQ(p.numel[1], 2 * block + 2 * 32 + wte);
  for (size_t r = 0; r < 2; ++r) EXPECT_EQ(p.memory[r].param_bytes, 4 * p.numel[r]);
  Layout3D tp;
  tp.tp = 2;
  tp.micro_batches = 2;
  const Result t = train(tp, 1);
  // Split: wte, c_attn, c_fc, both projections' weights; whole: wpe, LayerNorms, row-parallel biases.
  const size_t split = wte + 4 * (3 * 32 * 32 + 3 * 32 + 32 * 32 + 4 * 32 * 32 + 4 * 32 + 4 * 32 * 32);
  const size_t replicated = whole - split;
  EXPECT_EQ(t.numel[0], split / 2 + replicated);
  EXPECT_EQ(t.numel[1], split / 2 + replicated);
  std::printf("  whole model %zu parameters; pp 2 stages hold %zu and %zu; tp 2 ranks hold %zu each\n", whole,
              p.numel[0], p.numel[1], t.numel[0]);
}

TEST(ModelParallel, CheckpointingActivationBytesMatchClosedForm) {
  const GptConfig c = tiny_model();
  const double B = 2, T = 8, BT = B * T, C = c.n_embd, NH = c.n_head, Vp = c.padded_vocab(), L = c.n_layer;
  const double block = BT * (16 * C + 4) + B * NH * T * T;  // ln1, qkv, atty, res2, ln2, fch, gelu, res3, stats, P
  const double head = BT * C + 3 * BT + BT * Vp + 3 * BT;     // lnf, its stats, logits, losses, xent stats
  const double scratch = BT * (C + C + 3 * C + 4 * C);        // dresidual, dln, dqkv, dfch
  const double without = 4 * (BT * C + L * block + head + scratch);
  const double with = 4 * (BT * C + L * BT * C + head + scratch + block);  // + one recompute set
  Layout3D off, on;
  on.checkpoint = true;
  const double got_off = static_cast<double>(train(off, 1).memory[0].activation_bytes);
  const double got_on = static_cast<double>(train(on, 1).memory[0].activation_bytes);
  EXPECT_NEAR(got_off / without, 1.0, 0.10);
  EXPECT_NEAR(got_on / with, 1.0, 0.10);
  std::printf("  activation bytes: without checkpointing %.0f (closed form %.0f), with %.0f (closed form %.0f)\n",
              got_off, without, got_on, with);
}

}  // namespace
}  // namespace zt
