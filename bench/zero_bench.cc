// Times data-parallel training of a GPT (default GPT-2 small) on synthetic data at one
// ZeRO stage, under mpirun; rank 0 prints one JSON line with the median step time,
// tokens/s of the whole job, time in communication, the share of it hidden behind
// computation, and rank 0's model-state / bucket bytes and peak RSS. Used by
// bench/zero.sh and bench/zero_memory.sh.
//   mpirun -np N zero_bench --stage S [--batch B] [--seq T] [--steps K] [--warmup W]
//       [--layers L] [--heads H] [--embd C] [--vocab V] [--bucket E] [--prefetch E] [--algo ring|mpi]
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "comm/mpi_world.h"
#include "core/memory_stats.h"
#include "core/timer.h"
#include "engine/trainer.h"
#include "testing/synthetic_data.h"

int main(int argc, char** argv) {
  int stage = 0, batch = 4, seq = 64, steps = 4, warmup = 1, layers = 12, heads = 12, embd = 768, vocab = 50257;
  long bucket = 6'250'000, prefetch = 50'000'000;
  std::string algo = "ring";
  CLI::App app{"zero_bench: times data-parallel GPT training at one ZeRO stage"};
  app.add_option("--algo", algo)->check(CLI::IsMember({"ring", "mpi"}));
  app.add_option("--stage", stage);
  app.add_option("--batch", batch);
  app.add_option("--seq", seq);
  app.add_option("--steps", steps);
  app.add_option("--warmup", warmup);
  app.add_option("--layers", layers);
  app.add_option("--heads", heads);
  app.add_option("--embd", embd);
  app.add_option("--vocab", vocab);
  app.add_option("--bucket", bucket);
  app.add_option("--prefetch", prefetch);
  CLI11_PARSE(app, argc, argv);
  if (!zt::backend_environment_ok()) return 2;
  zt::CommOptions co;
  co.algorithm = algo == "ring" ? zt::CommAlgorithm::kRing : zt::CommAlgorithm::kMpi;
  auto world = zt::MpiWorld::init(co);
  if (!world.ok()) {
    std::fprintf(stderr, "%s\n", world.status().to_string().c_str());
    return 1;
  }
  zt::ProcessGroup& dp = world.value()->world();
  zt::TrainerOptions o;
  o.model.n_layer = layers;
  o.model.n_head = heads;
  o.model.n_embd = embd;
  o.model.vocab_size = vocab;
  o.model.n_positions = std::max(seq, 1024);
  o.micro_batch = batch;
  o.seq_len = seq;
  o.schedule.base_lr = 1e-4;
  o.zero.stage = static_cast<zt::ZeroStage>(stage);
  o.zero.reduce.bucket_elems = static_cast<size_t>(bucket);
  o.zero.allgather_bucket_elems = static_cast<size_t>(bucket);
  o.zero.fetch.prefetch_elems = static_cast<size_t>(prefetch);
  o.zero.reduce.overlap = true;
  auto created = zt::Trainer::create(o, &dp);
  if (!created.ok()) {
    std::fprintf(stderr, "%s\n", created.status().to_string().c_str());
    return 1;
  }
  zt::Trainer& t = *created.value();
  const double rss_after_create = zt::current_rss_bytes() / 1048576.0;
  std::vector<double> times;
  for (int s = 0; s < warmup + steps; ++s) {
    const auto d = zt::testing::synthetic_micro_batch(vocab, seq, batch, 1, dp.rank(), dp.size(), s, 0, 5);
    if (s == warmup) dp.reset_stats();
    zt::Stopwatch sw;
    auto st = t.step({{d.tokens.data(), d.targets.data()}});
    if (!st.ok()) {
      std::fprintf(stderr, "%s\n", st.status().to_string().c_str());
      return 1;
    }
    if (s >= warmup) times.push_back(sw.seconds());
  }
  const zt::CommStats cs = dp.stats();
  std::vector<double> sorted = times;
  std::sort(sorted.begin(), sorted.end());
  const double med = sorted[sorted.size() / 2];
  const zt::MemoryReport m = t.memory();
  if (dp.rank() == 0) {
    std::printf("{\"impl\":\"zerotrain\",\"stage\":%d,\"ranks\":%d,\"ms\":%.1f,\"ms_min\":%.1f,\"ms_max\":%.1f,"
                "\"tokens_per_s\":%.1f,\"comm_s_per_step\":%.3f,\"exposed_s_per_step\":%.3f,\"hidden_fraction\":%.3f,"
                "\"model_state_mb\":%.1f,\"bucket_mb\":%.1f,\"activation_mb\":%.1f,\"rss_after_create_mb\":%.1f,"
                "\"peak_rss_mb\":%.1f}\n",
                stage, dp.size(), 1e3 * med, 1e3 * sorted.front(), 1e3 * sorted.back(),
                static_cast<double>(batch) * seq * dp.size() / med, cs.busy_seconds / steps,
                cs.exposed_seconds / steps, cs.hidden_fraction(),
                (m.param_bytes + m.grad_bytes + m.optimizer_bytes) / 1048576.0, m.bucket_bytes / 1048576.0,
                m.activation_bytes / 1048576.0, rss_after_create, m.peak_rss_bytes / 1048576.0);
  }
  return 0;
}
