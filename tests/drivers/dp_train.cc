// Test driver: trains a tiny GPT under mpirun (data, pipeline and tensor parallel, any
// ZeRO stage) or on one process, on synthetic data. Rank 0 prints each step's loss and
// gradient norm as hex floats and writes the final parameters (data parallel only);
// every rank prints its memory and communication figures and a digest of its gradient
// arena after the last step (activation checkpointing must leave it bit-identical).
//   zt_dp_train --stage S --accum A --micro M --steps N [--algo mpi|ring] [--bucket E]
//               [--overlap 0|1] [--prefetch E] [--persist E] [--timeout S] [--lr X] [--out FILE]
//               [--layers L] [--embd C] [--heads H] [--vocab V] [--padded V] [--seq T]
//               [--tp P] [--pp P] [--schedule 1f1b|gpipe] [--ckpt 0|1] [--partition 0|1]
//               [--optimizer adamw|sgd] [--momentum M] [--llama-kv-heads K --llama-intermediate I]
//               [--device cpu|cuda] [--dtype f32|bf16]
// On a device, ranks take the GPU of their local rank modulo the GPUs there are, so
// several ranks may share one; their collectives then stage through host memory.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "comm/mpi_world.h"
#include "engine/parallel_setup.h"
#include "engine/trainer.h"
#include "testing/synthetic_data.h"

int main(int argc, char** argv) {
  int stage = 0, accum = 1, micro = 2, steps = 20, layers = 2, embd = 32, heads = 4, vocab = 97, seq = 8;
  int tp = 1, pp = 1, ckpt = 0, partition = 0, padded = 0;
  int kv_heads = 0, intermediate = 0;  // > 0: a Llama model (num_key_value_heads, intermediate_size)
  std::string schedule = "1f1b";
  long bucket = 2000, prefetch = 4000, persist = 0;
  int overlap = 1;
  double timeout = 60.0, lr = 1e-3;
  std::string algo = "mpi", out, optimizer = "adamw", device = "cpu", dtype = "f32";
  double momentum = 0.9;
  CLI::App app{"zt_dp_train: trains a tiny GPT on synthetic data"};
  app.add_option("--stage", stage);
  app.add_option("--accum", accum);
  app.add_option("--micro", micro);
  app.add_option("--steps", steps);
  app.add_option("--algo", algo)->check(CLI::IsMember({"mpi", "ring"}));
  app.add_option("--bucket", bucket);
  app.add_option("--overlap", overlap);
  app.add_option("--prefetch", prefetch);
  app.add_option("--persist", persist);
  app.add_option("--timeout", timeout);
  app.add_option("--lr", lr);
  app.add_option("--out", out);
  app.add_option("--layers", layers);
  app.add_option("--embd", embd);
  app.add_option("--heads", heads);
  app.add_option("--vocab", vocab);
  app.add_option("--seq", seq);
  app.add_option("--tp", tp);
  app.add_option("--pp", pp);
  app.add_option("--schedule", schedule)->check(CLI::IsMember({"1f1b", "gpipe"}));
  app.add_option("--ckpt", ckpt);
  app.add_option("--partition", partition);
  app.add_option("--padded", padded);
  app.add_option("--llama-kv-heads", kv_heads);
  app.add_option("--llama-intermediate", intermediate);
  app.add_option("--optimizer", optimizer)->check(CLI::IsMember({"adamw", "sgd"}));
  app.add_option("--momentum", momentum);
  app.add_option("--device", device)->check(CLI::IsMember({"cpu", "cuda"}));
  app.add_option("--dtype", dtype)->check(CLI::IsMember({"f32", "bf16"}));
  CLI11_PARSE(app, argc, argv);
  if (!zt::backend_environment_ok()) return 2;
  zt::CommOptions co;
  co.timeout_s = timeout;
  co.algorithm = algo == "ring" ? zt::CommAlgorithm::kRing : zt::CommAlgorithm::kMpi;
  co.ring_chunk_bytes = 4096;  // tiny model: several chunks per bucket exercise the pipeline
  std::unique_ptr<zt::MpiWorld> world;
  zt::ParallelGroups groups;
  int world_size = 1, world_rank = 0;
  if (zt::launched_by_mpi()) {
    auto w = zt::MpiWorld::init(co);
    if (!w.ok()) {
      std::fprintf(stderr, "%s\n", w.status().to_string().c_str());
      return 1;
    }
    world = std::move(w).value();
    world_size = world->world().size();
    world_rank = world->world().rank();
  }
  auto grid_or = zt::RankGrid::create(world_size, tp, world_size / (tp * pp), pp);
  if (!grid_or.ok()) {
    std::fprintf(stderr, "%s\n", grid_or.status().to_string().c_str());
    return 2;
  }
  const zt::RankGrid grid = grid_or.value();
  if (world) {
    auto g = zt::make_mpi_groups(*world, grid);
    if (!g.ok()) {
      std::fprintf(stderr, "%s\n", g.status().to_string().c_str());
      return 1;
    }
    groups = std::move(g).value();
  }
  zt::TrainerOptions o;
  auto backend = zt::backend_for(device == "cuda" ? zt::Device::kCuda : zt::Device::kCpu,
                                 dtype == "bf16" ? zt::DType::kBF16 : zt::DType::kF32);
  if (!backend.ok()) {
    std::fprintf(stderr, "%s\n", backend.status().to_string().c_str());
    return 2;
  }
  o.backend = backend.value();
  o.model.n_layer = layers;
  o.model.n_head = heads;
  o.model.n_embd = embd;
  o.model.vocab_size = vocab;
  o.model.padded_vocab_size = padded;
  o.model.n_positions = seq;
  if (kv_heads > 0) {
    o.model.set_family(zt::ModelFamily::kLlama);
    o.model.n_kv_head = kv_heads;
    o.model.intermediate_size = intermediate > 0 ? intermediate : 3 * embd;
  }
  o.micro_batch = micro;
  o.seq_len = seq;
  o.adamw.weight_decay = 0.1;
  o.optimizer = optimizer == "sgd" ? zt::OptimizerKind::kSgd : zt::OptimizerKind::kAdamW;
  o.sgd.momentum = momentum;
  o.schedule.base_lr = lr;
  o.gradient_clipping = 1.0;
  o.zero.stage = static_cast<zt::ZeroStage>(stage);
  o.zero.reduce.bucket_elems = static_cast<size_t>(bucket);
  o.zero.allgather_bucket_elems = static_cast<size_t>(bucket);
  o.zero.reduce.overlap = overlap != 0;
  o.zero.fetch.prefetch_elems = static_cast<size_t>(prefetch);
  o.zero.fetch.persistence_threshold = static_cast<size_t>(persist);
  o.pipe_schedule = schedule == "gpipe" ? zt::PipeScheduleKind::kGPipe : zt::PipeScheduleKind::k1F1B;
  o.micro_batches = accum;
  if (ckpt) o.checkpoint.assign(static_cast<size_t>(layers), true);
  o.partition_activations = partition != 0;
  auto layout = zt::layout_for_rank(o.model, grid, world_rank, zt::StagePartition::kUniform);
  if (!layout.ok()) {
    std::fprintf(stderr, "%s\n", layout.status().to_string().c_str());
    return 2;
  }
  o.layout = layout.value();
  auto created = zt::Trainer::create(o, world ? &groups : nullptr);
  if (!created.ok()) {
    std::fprintf(stderr, "%s\n", created.status().to_string().c_str());
    return 1;
  }
  zt::Trainer& t = *created.value();
  for (const std::string& n : t.notes()) {
    if (world_rank == 0) std::printf("note: %s\n", n.c_str());
  }
  const int rank = grid.coord(world_rank).dp, N = grid.dp();
  int64_t bytes_first_step = 0;
  for (int s = 0; s < steps; ++s) {
    const zt::testing::SyntheticStep data = zt::testing::synthetic_step(vocab, seq, micro, accum, rank, N, s, 7);
    if (s == 1) t.dp().reset_stats();
    auto st = t.step(data.micro_batches());
    if (!st.ok()) {
      std::fprintf(stderr, "rank %d: %s\n", rank, st.status().to_string().c_str());
      return 1;
    }
    if (s == 1) bytes_first_step = t.dp().stats().total_logical_bytes();
    if (world_rank == 0) std::printf("step %d loss %a norm %a\n", s + 1, st->loss, st->grad_norm);
  }
  const zt::ParamTable& table = t.param_table();
  uint64_t digest = 0xcbf29ce484222325ull;  // FNV-1a over the gradient arena's bytes
  std::vector<unsigned char> bytes(t.grads().bytes());  // through the backend: its memory may not be the host's
  t.backend().copy_to_host(bytes.data(), t.grads().data(), bytes.size());
  for (unsigned char b : bytes) digest = (digest ^ b) * 0x100000001b3ull;
  std::printf("rank %d grad_digest %016llx\n", world_rank, static_cast<unsigned long long>(digest));
  std::vector<float> params(table.numel());
  const zt::Status gs = t.gather_params(params.data());
  if (!gs.ok()) {
    std::fprintf(stderr, "%s\n", gs.to_string().c_str());
    return 1;
  }
  if (world_rank == 0 && !out.empty() && tp * pp == 1) {
    std::ofstream f(out, std::ios::binary);
    f.write(reinterpret_cast<const char*>(params.data()), static_cast<std::streamsize>(params.size() * sizeof(float)));
  }
  const zt::MemoryReport m = t.memory();
  std::printf("rank %d psi %zu params %zu grads %zu optimizer %zu buckets %zu comm_bytes_per_step %lld\n", world_rank,
              table.numel(), m.param_bytes, m.grad_bytes, m.optimizer_bytes, m.bucket_bytes,
              static_cast<long long>(bytes_first_step));
  std::fflush(stdout);
  return 0;
}
