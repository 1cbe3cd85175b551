// Test driver: trains a tiny GPT with parameter servers under mpirun (ranks 0..S-1 serve,
// the rest work) on the same synthetic data as zt_dp_train, so a synchronous run can be
// compared step by step with all-reduce data parallelism over the workers. Rank 0 (server
// 0) prints each synchronous step's loss and gradient norm as hex floats and, at the end,
// one line "ps_summary <json>"; the first worker writes the final parameters.
//   zt_ps_train --servers S --mode sync|async|bounded [--staleness K] --steps N [--accum A]
//               [--micro M] [--bucket E] [--deadline S] [--lr X] [--out FILE] [--slow-rank R
//               --slow-ms D] [--stop-rank R --stop-at K] [--layers L] [--embd C] [--heads H]
//               [--vocab V] [--seq T]
// --stop-rank/--stop-at make that worker hang (sleep forever) before its K-th step, or
// that server before serving: the job must stop at the deadline with a message naming it.
#include <unistd.h>

#include <CLI/CLI.hpp>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "comm/mpi_world.h"
#include "parallel/param_server/ps_job.h"
#include "testing/synthetic_data.h"

int main(int argc, char** argv) {
  int servers = 1, accum = 1, micro = 2, steps = 20, layers = 2, embd = 32, heads = 4, vocab = 97, seq = 8;
  long bucket = 2000, staleness = 0;
  int slow_rank = -1, stop_rank = -1, stop_at = -1;
  double deadline = 60.0, lr = 1e-3, slow_ms = 0.0;
  std::string mode = "sync", out;
  CLI::App app{"zt_ps_train: trains a tiny GPT with parameter servers on synthetic data"};
  app.add_option("--servers", servers);
  app.add_option("--mode", mode)->check(CLI::IsMember({"sync", "async", "bounded"}));
  app.add_option("--staleness", staleness);
  app.add_option("--accum", accum);
  app.add_option("--micro", micro);
  app.add_option("--steps", steps);
  app.add_option("--bucket", bucket);
  app.add_option("--deadline", deadline);
  app.add_option("--lr", lr);
  app.add_option("--out", out);
  app.add_option("--slow-rank", slow_rank);
  app.add_option("--slow-ms", slow_ms);
  app.add_option("--stop-rank", stop_rank);
  app.add_option("--stop-at", stop_at);
  app.add_option("--layers", layers);
  app.add_option("--embd", embd);
  app.add_option("--heads", heads);
  app.add_option("--vocab", vocab);
  app.add_option("--seq", seq);
  CLI11_PARSE(app, argc, argv);
  if (!zt::backend_environment_ok()) return 2;
  zt::CommOptions co;
  co.algorithm = zt::CommAlgorithm::kMpi;
  auto mpi = zt::MpiWorld::init(co);
  if (!mpi.ok()) {
    std::fprintf(stderr, "%s\n", mpi.status().to_string().c_str());
    return 1;
  }
  zt::PsOptions po;
  po.servers = servers;
  po.mode = zt::ps_mode_from_name(mode).value();  // checked by --mode
  po.staleness = staleness;
  po.bucket_elems = static_cast<size_t>(bucket);
  po.deadline_s = deadline;
  po.slow_worker_rank = slow_rank;
  po.slow_worker_delay_ms = slow_ms;
  zt::PsModelOptions mo;  // as zt_dp_train
  mo.model.n_layer = layers;
  mo.model.n_head = heads;
  mo.model.n_embd = embd;
  mo.model.vocab_size = vocab;
  mo.model.n_positions = seq;
  mo.micro_batch = micro;
  mo.seq_len = seq;
  mo.grad_accum = accum;
  mo.adamw.weight_decay = 0.1;
  mo.schedule.base_lr = lr;
  mo.gradient_clipping = 1.0;
  auto groups = zt::make_ps_groups(*mpi.value(), po, co);
  if (!groups.ok()) zt::abort_mpi_job(groups.status());
  const int rank = groups->ps->rank(), W = groups->ps->size() - servers;
  zt::testing::SyntheticStep data;
  int units_done = 0;
  zt::PsWorkerHooks hooks;
  hooks.unit_batches = [&](int64_t unit) -> zt::StatusOr<std::vector<zt::MicroBatch>> {
    if (rank == stop_rank && units_done == stop_at) {
      std::fprintf(stderr, "rank %d: stopping (test hook)\n", rank);
      while (true) ::pause();
    }
    ++units_done;
    data = zt::testing::synthetic_step(vocab, seq, micro, accum, static_cast<int>(unit % W), W, unit / W, 7);
    return data.micro_batches();
  };
  if (rank == stop_rank && rank < servers) {  // a hung server: it never serves
    std::fprintf(stderr, "rank %d: stopping (test hook)\n", rank);
    while (true) ::pause();
  }
  auto result = zt::run_ps_rank(mo, po, groups.value(), steps, &hooks, rank == servers);
  if (!result.ok()) zt::abort_mpi_job(result.status());
  if (rank == 0) {
    for (const zt::PsStepRecord& r : result->records) {
      std::printf("step %lld loss %a norm %a\n", static_cast<long long>(r.step), r.loss, r.grad_norm);
    }
    std::printf("ps_summary %s\n", zt::ps_summary_json(result->summary).c_str());
    std::fputs(zt::format_ps_report(result->reports, result->summary).c_str(), stdout);
  }
  if (rank == servers && !out.empty()) {
    std::ofstream f(out, std::ios::binary);
    f.write(reinterpret_cast<const char*>(result->final_params.data()),
            static_cast<std::streamsize>(result->final_params.size() * sizeof(float)));
  }
  std::fflush(stdout);
  return 0;
}
