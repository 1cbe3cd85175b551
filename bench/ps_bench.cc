// Times parameter-server training (issue 7) or all-reduce data parallelism on synthetic
// data under mpirun; rank 0 prints one JSON line: the job's tokens/s (all workers' tokens
// over the wall time from the first step to the last), ms per global step, and for the
// parameter server its push/pull figures and staleness. The same global batch either way:
// --batch sequences per worker per step, W workers (all ranks for all-reduce; ranks S..
// for the parameter server). --slow-rank/--slow-ms slow one worker by sleeping per step
// (the parameter_server.test_slow_worker hook; the all-reduce loop sleeps the same way).
//   mpirun -np N ps_bench --impl ps|allreduce [--mode sync|async|bounded] [--staleness K]
//       [--servers S] [--steps K] [--batch B] [--seq T] [--layers L] [--heads H] [--embd C]
//       [--vocab V] [--bucket E] [--slow-rank R] [--slow-ms D]
#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "backend/backend.h"
#include "comm/mpi_world.h"
#include "core/timer.h"
#include "engine/trainer.h"
#include "io/json_strict.h"
#include "parallel/param_server/ps_job.h"
#include "testing/synthetic_data.h"

namespace {

struct Args {
  std::string impl = "ps", mode = "sync";
  int servers = 1, steps = 30, batch = 4, seq = 64, layers = 4, heads = 4, embd = 256, vocab = 257;
  long staleness = 0, bucket = 1'000'000;
  int slow_rank = -1;
  double slow_ms = 0.0;
};

int fail(const zt::Status& s) {
  std::fprintf(stderr, "ps_bench: %s\n", s.to_string().c_str());
  return 1;
}

// The same model and optimisation for both implementations.
zt::GptTrainingOptions training_options(const Args& a) {
  zt::GptTrainingOptions o;
  o.model.n_layer = a.layers;
  o.model.n_head = a.heads;
  o.model.n_embd = a.embd;
  o.model.vocab_size = a.vocab;
  o.model.n_positions = a.seq;
  o.micro_batch = a.batch;
  o.seq_len = a.seq;
  o.schedule.base_lr = 1e-4;
  return o;
}

int run_allreduce(const Args& a, zt::MpiWorld& mpi) {
  zt::ProcessGroup& dp = mpi.world();
  zt::TrainerOptions o;
  static_cast<zt::GptTrainingOptions&>(o) = training_options(a);
  o.zero.reduce.bucket_elems = static_cast<size_t>(a.bucket);
  auto created = zt::Trainer::create(o, &dp);
  if (!created.ok()) return fail(created.status());
  zt::Trainer& t = *created.value();
  if (zt::Status s = dp.barrier()->wait(); !s.ok()) return fail(s);
  zt::Stopwatch clock;
  for (int step = 0; step < a.steps; ++step) {
    if (dp.rank() == a.slow_rank) std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(a.slow_ms));
    const auto d = zt::testing::synthetic_micro_batch(a.vocab, a.seq, a.batch, 1, dp.rank(), dp.size(), step, 0, 5);
    auto st = t.step({{d.tokens.data(), d.targets.data()}});
    if (!st.ok()) return fail(st.status());
  }
  if (zt::Status s = dp.barrier()->wait(); !s.ok()) return fail(s);
  const double seconds = clock.seconds();
  if (dp.rank() == 0) {
    const double tokens = static_cast<double>(a.steps) * a.batch * a.seq * dp.size();
    zt::Json j = {{"impl", "allreduce"}, {"mode", "allreduce"}, {"slowed", a.slow_rank >= 0 ? 1 : 0},
                  {"workers", dp.size()}, {"seconds", seconds}, {"tokens_per_s", tokens / seconds},
                  {"step_ms", 1e3 * seconds / a.steps}};
    std::printf("%s\n", j.dump().c_str());
  }
  return 0;
}

int run_ps(const Args& a, zt::MpiWorld& mpi, const zt::CommOptions& co) {
  zt::PsOptions po;
  po.servers = a.servers;
  po.mode = zt::ps_mode_from_name(a.mode).value();  // checked by --mode
  po.staleness = a.staleness;
  po.bucket_elems = static_cast<size_t>(a.bucket);
  po.deadline_s = 120.0;
  po.slow_worker_rank = a.slow_rank;
  po.slow_worker_delay_ms = a.slow_ms;
  zt::PsModelOptions mo;
  static_cast<zt::GptTrainingOptions&>(mo) = training_options(a);
  auto groups = zt::make_ps_groups(mpi, po, co);
  if (!groups.ok()) return fail(groups.status());
  const int W = groups->ps->size() - a.servers;
  zt::testing::SyntheticBatch data;
  zt::PsWorkerHooks hooks;
  hooks.unit_batches = [&](int64_t unit) -> zt::StatusOr<std::vector<zt::MicroBatch>> {
    data = zt::testing::synthetic_micro_batch(a.vocab, a.seq, a.batch, 1, static_cast<int>(unit % W), W, unit / W, 0, 5);
    return std::vector<zt::MicroBatch>{{data.tokens.data(), data.targets.data()}};
  };
  auto result = zt::run_ps_rank(mo, po, groups.value(), a.steps, &hooks, false);
  if (!result.ok()) zt::abort_mpi_job(result.status());
  if (groups->ps->rank() == 0) {
    zt::Json j = zt::Json::parse(zt::ps_summary_json(result->summary));
    j["impl"] = "ps";
    if (po.effective_mode() == zt::PsMode::kBounded) j["mode"] = "bounded" + std::to_string(a.staleness);
    j["slowed"] = a.slow_rank >= 0 ? 1 : 0;
    std::printf("%s\n", j.dump().c_str());
    std::fputs(zt::format_ps_report(result->reports, result->summary).c_str(), stderr);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  CLI::App app{"ps_bench: times parameter-server or all-reduce training"};
  app.add_option("--impl", a.impl)->check(CLI::IsMember({"ps", "allreduce"}));
  app.add_option("--mode", a.mode)->check(CLI::IsMember({"sync", "async", "bounded"}));
  app.add_option("--staleness", a.staleness);
  app.add_option("--servers", a.servers);
  app.add_option("--steps", a.steps);
  app.add_option("--batch", a.batch);
  app.add_option("--seq", a.seq);
  app.add_option("--layers", a.layers);
  app.add_option("--heads", a.heads);
  app.add_option("--embd", a.embd);
  app.add_option("--vocab", a.vocab);
  app.add_option("--bucket", a.bucket);
  app.add_option("--slow-rank", a.slow_rank);
  app.add_option("--slow-ms", a.slow_ms);
  CLI11_PARSE(app, argc, argv);
  if (!zt::backend_environment_ok()) return 2;
  zt::CommOptions co;
  auto mpi = zt::MpiWorld::init(co);
  if (!mpi.ok()) return fail(mpi.status());
  return a.impl == "allreduce" ? run_allreduce(a, *mpi.value()) : run_ps(a, *mpi.value(), co);
}
