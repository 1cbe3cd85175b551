// Test driver: trains a tiny GPT data-parallel (under mpirun) or on one process, on
// synthetic data, with a chosen ZeRO stage, accumulation, bucket size and collective
// algorithm. Rank 0 prints each step's loss and gradient norm as hex floats and writes
// the final parameters; every rank prints its memory and communication figures.
//   zt_dp_train --stage S --accum A --micro M --steps N [--algo mpi|ring] [--bucket E]
//               [--overlap 0|1] [--prefetch E] [--persist E] [--timeout S] [--lr X] [--out FILE]
//               [--layers L] [--embd C] [--heads H] [--vocab V] [--seq T]
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "comm/mpi_world.h"
#include "engine/trainer.h"
#include "testing/synthetic_data.h"

int main(int argc, char** argv) {
  int stage = 0, accum = 1, micro = 2, steps = 20, layers = 2, embd = 32, heads = 4, vocab = 97, seq = 8;
  long bucket = 2000, prefetch = 4000, persist = 0;
  int overlap = 1;
  double timeout = 60.0, lr = 1e-3;
  std::string algo = "mpi", out;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--stage") stage = std::atoi(v.c_str());
    else if (k == "--accum") accum = std::atoi(v.c_str());
    else if (k == "--micro") micro = std::atoi(v.c_str());
    else if (k == "--steps") steps = std::atoi(v.c_str());
    else if (k == "--algo") algo = v;
    else if (k == "--bucket") bucket = std::atol(v.c_str());
    else if (k == "--overlap") overlap = std::atoi(v.c_str());
    else if (k == "--prefetch") prefetch = std::atol(v.c_str());
    else if (k == "--persist") persist = std::atol(v.c_str());
    else if (k == "--timeout") timeout = std::atof(v.c_str());
    else if (k == "--lr") lr = std::atof(v.c_str());
    else if (k == "--out") out = v;
    else if (k == "--layers") layers = std::atoi(v.c_str());
    else if (k == "--embd") embd = std::atoi(v.c_str());
    else if (k == "--heads") heads = std::atoi(v.c_str());
    else if (k == "--vocab") vocab = std::atoi(v.c_str());
    else if (k == "--seq") seq = std::atoi(v.c_str());
    else {
      std::fprintf(stderr, "unknown flag %s\n", k.c_str());
      return 2;
    }
  }
  zt::CommOptions co;
  co.timeout_s = timeout;
  co.algorithm = algo == "ring" ? zt::CommAlgorithm::kRing : zt::CommAlgorithm::kMpi;
  co.ring_chunk_bytes = 4096;  // tiny model: several chunks per bucket exercise the pipeline
  std::unique_ptr<zt::MpiWorld> world;
  zt::ProcessGroup* dp = nullptr;
  if (zt::launched_by_mpi()) {
    auto w = zt::MpiWorld::init(co);
    if (!w.ok()) {
      std::fprintf(stderr, "%s\n", w.status().to_string().c_str());
      return 1;
    }
    world = std::move(w).value();
    dp = &world->world();
  }
  zt::TrainerOptions o;
  o.model.n_layer = layers;
  o.model.n_head = heads;
  o.model.n_embd = embd;
  o.model.vocab_size = vocab;
  o.model.n_positions = seq;
  o.micro_batch = micro;
  o.seq_len = seq;
  o.adamw.weight_decay = 0.1;
  o.schedule.base_lr = lr;
  o.gradient_clipping = 1.0;
  o.zero.stage = static_cast<zt::ZeroStage>(stage);
  o.zero.reduce_bucket_elems = static_cast<size_t>(bucket);
  o.zero.allgather_bucket_elems = static_cast<size_t>(bucket);
  o.zero.overlap_comm = overlap != 0;
  o.zero.prefetch_elems = static_cast<size_t>(prefetch);
  o.zero.persistence_threshold = static_cast<size_t>(persist);
  auto created = zt::Trainer::create(o, dp);
  if (!created.ok()) {
    std::fprintf(stderr, "%s\n", created.status().to_string().c_str());
    return 1;
  }
  zt::Trainer& t = *created.value();
  const int rank = t.dp().rank(), N = t.dp().size();
  int64_t bytes_first_step = 0;
  for (int s = 0; s < steps; ++s) {
    std::vector<zt::testing::SyntheticBatch> data;
    std::vector<zt::MicroBatch> mbs;
    for (int m = 0; m < accum; ++m) data.push_back(zt::testing::synthetic_micro_batch(vocab, seq, micro, accum, rank, N, s, m, 7));
    for (const auto& d : data) mbs.push_back({d.tokens.data(), d.targets.data()});
    if (s == 1) t.dp().reset_stats();
    auto st = t.step(mbs);
    if (!st.ok()) {
      std::fprintf(stderr, "rank %d: %s\n", rank, st.status().to_string().c_str());
      return 1;
    }
    if (s == 1) bytes_first_step = t.dp().stats().total_logical_bytes();
    if (rank == 0) std::printf("step %d loss %a norm %a\n", s + 1, st->loss, st->grad_norm);
  }
  const zt::ParamTable& table = t.param_table();
  std::vector<float> params(table.numel());
  const zt::Status gs = t.gather_params(params.data());
  if (!gs.ok()) {
    std::fprintf(stderr, "%s\n", gs.to_string().c_str());
    return 1;
  }
  if (rank == 0 && !out.empty()) {
    std::ofstream f(out, std::ios::binary);
    f.write(reinterpret_cast<const char*>(params.data()), static_cast<std::streamsize>(params.size() * sizeof(float)));
  }
  const zt::MemoryReport m = t.memory();
  std::printf("rank %d psi %zu params %zu grads %zu optimizer %zu buckets %zu comm_bytes_per_step %lld\n", rank,
              table.numel(), m.param_bytes, m.grad_bytes, m.optimizer_bytes, m.bucket_bytes,
              static_cast<long long>(bytes_first_step));
  std::fflush(stdout);
  return 0;
}
