// Parameter-server training in one process (thread backend, ranks as threads): quick
// in-process versions of the mpirun tests in ps_mpi_test.cc. Synchronous mode against the
// single-process engine on the same global batch; every unit processed exactly once in
// asynchronous mode with a slowed worker, which does fewer of them; the bounded mode's
// staleness never above its bound; a stopped worker and a stopped server stop the job
// with a DeadlineExceeded naming them.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <numeric>
#include <thread>
#include <vector>

#include "comm/thread_world.h"
#include "engine/trainer.h"
#include "parallel/param_server/ps_job.h"
#include "testing/synthetic_data.h"

namespace zt {
namespace {

constexpr int kVocab = 61, kSeq = 8, kMicro = 2;

// llama: a grouped-query Llama (4 heads, 2 kv heads, untied head) of the same width.
PsModelOptions tiny_model(bool llama = false) {
  PsModelOptions o;
  if (llama) {
    o.model.set_family(ModelFamily::kLlama);
    o.model.n_kv_head = 2;
    o.model.intermediate_size = 64;
  }
  o.model.n_layer = 2;
  o.model.n_head = 4;
  o.model.n_embd = 32;
  o.model.vocab_size = kVocab;
  o.model.n_positions = kSeq;
  o.micro_batch = kMicro;
  o.seq_len = kSeq;
  o.schedule.base_lr = 1e-2;
  return o;
}

PsOptions ps(int servers, PsMode mode, int64_t staleness = 0) {
  PsOptions o;
  o.servers = servers;
  o.mode = mode;
  o.staleness = staleness;
  o.bucket_elems = 3000;
  o.deadline_s = 30.0;
  return o;
}

struct Job {
  std::vector<Status> status;              // by rank
  std::vector<PsRunResult> result;         // by rank (when OK)
};

// Runs a job on S + W thread-ranks; `stop` (if set) is called by each rank first and
// returns true for a rank that must "stop" (return OK at once without taking part).
Job run_job(int S, int W, const PsModelOptions& mo, const PsOptions& po, int64_t steps, double comm_timeout_s = 60.0,
            const std::function<bool(int)>& stop = nullptr) {
  const int N = S + W;
  CommOptions co;
  co.timeout_s = comm_timeout_s;
  ThreadWorld world(N, co);
  Job job;
  job.status.resize(static_cast<size_t>(N));
  job.result.resize(static_cast<size_t>(N));
  std::vector<int> servers(static_cast<size_t>(S)), workers(static_cast<size_t>(W));
  std::iota(servers.begin(), servers.end(), 0);
  std::iota(workers.begin(), workers.end(), S);
  (void)run_ranks(N, [&](int rank) -> Status {
    auto w = world.group(rank);
    auto p = world.group(rank);
    auto role = world.subgroup(rank < S ? servers : workers, rank);
    if (stop && stop(rank)) return Status::OK();
    PsGroups g;
    g.world = w.get();
    g.ps = p.get();
    g.role = role.get();
    testing::SyntheticStep data;
    PsWorkerHooks hooks;
    hooks.unit_batches = [&](int64_t unit) -> StatusOr<std::vector<MicroBatch>> {
      data = testing::synthetic_step(kVocab, kSeq, kMicro, mo.grad_accum, static_cast<int>(unit % W), W, unit / W, 3);
      return data.micro_batches();
    };
    auto r = run_ps_rank(mo, po, g, steps, &hooks, /*keep_params=*/true);
    job.status[static_cast<size_t>(rank)] = r.status();
    if (r.ok()) job.result[static_cast<size_t>(rank)] = std::move(r).value();
    return r.status();
  });
  return job;
}

// Both engine optimizers, with a warm-up/decay schedule indexed by the global step.
TEST(PsThread, SyncMatchesTheSingleProcessEngine) {
  constexpr int kSteps = 8, W = 2;
  for (int run = 0; run < 3; ++run) {  // GPT-2 AdamW, GPT-2 SGD, Llama AdamW
    const OptimizerKind kind = run == 1 ? OptimizerKind::kSgd : OptimizerKind::kAdamW;
    PsModelOptions mo = tiny_model(/*llama=*/run == 2);
    mo.optimizer = kind;
    mo.sgd.lr = mo.schedule.base_lr;
    mo.sgd.momentum = 0.9;
    mo.sgd.weight_decay = 0.01;
    mo.schedule.kind = ScheduleKind::kWarmupDecayLR;
    mo.schedule.warmup_num_steps = 3;
    mo.schedule.total_num_steps = kSteps;
    mo.schedule.warmup_max_lr = 1e-2;
    // The reference: one process with all W micro-batches of each global batch.
    TrainerOptions to;
    static_cast<GptTrainingOptions&>(to) = mo;
    auto ref = Trainer::create(to);
    ASSERT_TRUE(ref.ok()) << ref.status().to_string();
    std::vector<double> ref_losses;
    for (int s = 0; s < kSteps; ++s) {
      // W ranks' micro-batches of step s are one rank's W accumulated micro-batches.
      const testing::SyntheticStep data = testing::synthetic_step(kVocab, kSeq, kMicro, W, 0, 1, s, 3);
      auto st = ref.value()->step(data.micro_batches());
      ASSERT_TRUE(st.ok()) << st.status().to_string();
      ref_losses.push_back(st->loss);
    }
    for (int S : {1, 2}) {
      const Job job = run_job(S, W, mo, ps(S, PsMode::kSync), kSteps);
      for (const Status& s : job.status) ASSERT_TRUE(s.ok()) << s.to_string();
      const auto& records = job.result[0].records;
      ASSERT_EQ(records.size(), static_cast<size_t>(kSteps));
      for (int s = 0; s < kSteps; ++s) {
        EXPECT_NEAR(records[static_cast<size_t>(s)].loss, ref_losses[static_cast<size_t>(s)],
                    1e-5 * std::fabs(ref_losses[static_cast<size_t>(s)]))
            << "S=" << S << " step " << s + 1 << (kind == OptimizerKind::kSgd ? " SGD" : " AdamW")
            << (run == 2 ? " llama" : "");
      }
      // Every worker ends with the same parameters, and no push was stale.
      EXPECT_EQ(job.result[static_cast<size_t>(S)].final_params, job.result[static_cast<size_t>(S + 1)].final_params);
      EXPECT_EQ(job.result[0].summary.staleness.max, 0);
      EXPECT_EQ(job.result[0].summary.missed.max, 0);
      EXPECT_EQ(job.result[0].summary.staleness.total, kSteps * W * S);  // every server records every push
    }
  }
}

// bf16 workers (a 16-bit copy of the pulled fp32 parameters; fp32 gradients pushed, the
// servers' optimizer in fp32) against the single-process bf16 engine, within the
// fp32-vs-bf16 gap of the single process (engine/trainer_precision_test.cc's argument).
TEST(PsThread, SyncBf16MatchesTheSingleProcessBf16Engine) {
  constexpr int kSteps = 4, W = 2;
  PsModelOptions mo = tiny_model();
  mo.optimizer = OptimizerKind::kSgd;
  mo.sgd.momentum = 0.9;
  mo.schedule.base_lr = mo.sgd.lr = 0.1;
  mo.gradient_clipping = 0.0;
  std::vector<double> ref[2];  // fp32, bf16
  for (int p = 0; p < 2; ++p) {
    TrainerOptions to;
    static_cast<GptTrainingOptions&>(to) = mo;
    to.backend = backend_for(Device::kCpu, p == 0 ? DType::kF32 : DType::kBF16).value();
    auto t = Trainer::create(to);
    ASSERT_TRUE(t.ok()) << t.status().to_string();
    for (int s = 0; s < kSteps; ++s) {
      const testing::SyntheticStep data = testing::synthetic_step(kVocab, kSeq, kMicro, W, 0, 1, s, 3);
      ref[p].push_back(t.value()->step(data.micro_batches())->loss);
    }
  }
  mo.backend = backend_for(Device::kCpu, DType::kBF16).value();
  const Job job = run_job(1, W, mo, ps(1, PsMode::kSync), kSteps);
  for (const Status& s : job.status) ASSERT_TRUE(s.ok()) << s.to_string();
  const auto& records = job.result[0].records;
  ASSERT_EQ(records.size(), static_cast<size_t>(kSteps));
  double gap = 0.0;
  for (int s = 0; s < kSteps; ++s) {
    gap = std::max(gap, std::fabs(ref[1][s] - ref[0][s]) / ref[0][s]);
    const double diff = std::fabs(records[static_cast<size_t>(s)].loss - ref[1][s]) / ref[1][s];
    EXPECT_LE(diff, gap) << "step " << s + 1;
    std::printf("  step %d: bf16 PS vs bf16 engine %.2e (gap to fp32 %.2e)\n", s + 1, diff, gap);
  }
  EXPECT_EQ(job.result[1].final_params, job.result[2].final_params);
}

TEST(PsThread, AsyncProcessesEveryUnitOnceAndTheSlowWorkerFewer) {
  constexpr int kSteps = 12, S = 1, W = 3;
  PsOptions po = ps(S, PsMode::kAsync);
  po.slow_worker_rank = S + 1;  // worker 1
  po.slow_worker_delay_ms = 15.0;
  const Job job = run_job(S, W, tiny_model(), po, kSteps);
  for (const Status& s : job.status) ASSERT_TRUE(s.ok()) << s.to_string();
  const PsSummary& sum = job.result[0].summary;
  ASSERT_EQ(sum.worker_units.size(), 3u);
  EXPECT_EQ(sum.worker_units[0] + sum.worker_units[1] + sum.worker_units[2], kSteps * W);
  EXPECT_LT(sum.worker_units[1], sum.worker_units[0]);
  EXPECT_LT(sum.worker_units[1], sum.worker_units[2]);
  EXPECT_EQ(sum.staleness.total, kSteps * W);  // one update per push
  EXPECT_GT(sum.staleness.max, 0);             // the fast workers ran ahead
  EXPECT_EQ(job.result[static_cast<size_t>(S)].final_params, job.result[static_cast<size_t>(S + 2)].final_params);
}

TEST(PsThread, BoundedStalenessNeverExceedsTheBound) {
  constexpr int kSteps = 12, S = 2, W = 3;
  for (int64_t bound : {1, 2}) {
    PsOptions po = ps(S, PsMode::kBounded, bound);
    po.slow_worker_rank = S;  // worker 0
    po.slow_worker_delay_ms = 10.0;
    const Job job = run_job(S, W, tiny_model(), po, kSteps);
    for (const Status& s : job.status) ASSERT_TRUE(s.ok()) << s.to_string();
    int64_t units = 0;
    for (int r = 0; r < S; ++r) {
      const PsServerStats& st = job.result[static_cast<size_t>(r)].reports[static_cast<size_t>(r)].server;
      EXPECT_LE(st.staleness.max, bound) << "server " << r;
      EXPECT_EQ(st.staleness.total, kSteps * W) << "server " << r;
    }
    for (int64_t u : job.result[0].summary.worker_units) units += u;
    EXPECT_EQ(units, kSteps * W);
    EXPECT_EQ(job.result[0].summary.staleness.max, bound);  // the fast workers use their lead
  }
}

TEST(PsThread, StaleBoundZeroIsSynchronous) {
  PsOptions po = ps(1, PsMode::kBounded, 0);
  EXPECT_EQ(po.effective_mode(), PsMode::kSync);
  const Job job = run_job(1, 2, tiny_model(), po, 4);
  for (const Status& s : job.status) ASSERT_TRUE(s.ok()) << s.to_string();
  EXPECT_EQ(job.result[0].records.size(), 4u);
  EXPECT_EQ(job.result[0].summary.mode, "sync");
}

TEST(PsThread, AStoppedWorkerStopsTheJobNamingIt) {
  PsOptions po = ps(1, PsMode::kAsync);
  po.deadline_s = 0.3;
  const Job job = run_job(1, 2, tiny_model(), po, 50, /*comm_timeout_s=*/2.0, [](int rank) { return rank == 2; });
  const Status& server = job.status[0];
  EXPECT_EQ(server.code(), StatusCode::kDeadlineExceeded) << server.to_string();
  EXPECT_NE(server.message().find("worker rank 2 (worker 1 of 2) sent no step header"), std::string::npos)
      << server.message();
  EXPECT_NE(server.message().find("stopped"), std::string::npos) << server.message();
}

TEST(PsThread, AStoppedServerStopsTheJobNamingIt) {
  PsOptions po = ps(2, PsMode::kAsync);
  po.deadline_s = 0.3;
  const Job job = run_job(2, 2, tiny_model(), po, 50, /*comm_timeout_s=*/2.0, [](int rank) { return rank == 1; });
  // Server 0 blames server 1 (the workers told it they wait on it), not the workers.
  const Status& server0 = job.status[0];
  EXPECT_EQ(server0.code(), StatusCode::kDeadlineExceeded) << server0.to_string();
  EXPECT_NE(server0.message().find("waiting for parameter server rank 1"), std::string::npos) << server0.message();
  for (int w : {2, 3}) {
    const Status& s = job.status[static_cast<size_t>(w)];
    EXPECT_EQ(s.code(), StatusCode::kDeadlineExceeded) << s.to_string();
    EXPECT_NE(s.message().find("parameter server rank"), std::string::npos) << s.message();
  }
}

}  // namespace
}  // namespace zt
