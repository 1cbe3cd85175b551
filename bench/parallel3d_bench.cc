// Times one parallel layout of GPT-2 (default small) on synthetic data: data, pipeline or
// tensor parallel over the ranks mpirun starts (or one process), optionally with
// activation checkpointing; with --experts, a Llama whose blocks hold E top-2 experts
// (Mixtral routing), expert parallel over --ep of the data-parallel ranks (issue 30). Every rank prints one JSON line: median step time, time in
// communication, the pipeline bubble (time blocked on neighbours / step time) next to
// the ideal (S-1)/(vM+S-1), the same over the compute (forward and backward time) next
// to Megatron's (S-1)/(vM), activation bytes and peak RSS. With --virtual v > 1 the
// pipeline is interleaved 1F1B with v chunks per rank. Used by bench/parallel3d.sh and
// bench/interleaved.sh.
//   [mpirun -np N] parallel3d_bench [--tp P] [--pp P] [--virtual V] [--micro B] [--accum M]
//       [--seq T] [--steps K] [--ckpt 0|1] [--schedule 1f1b|gpipe] [--layers L] [--embd C]
//       [--heads H] [--partition flops|uniform] [--experts E --expert-width I --ep P --vocab V]
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "comm/mpi_world.h"
#include "core/timer.h"
#include "engine/parallel_setup.h"
#include "engine/trainer.h"
#include "testing/synthetic_data.h"

int main(int argc, char** argv) {
  int tp = 1, pp = 1, micro = 4, accum = 1, seq = 64, steps = 3, ckpt = 0, layers = 12, embd = 768, heads = 12;
  int experts = 0, expert_width = 512, ep = 1, vocab = 50257, virtual_stages = 1;
  std::string schedule = "1f1b", partition = "flops";
  CLI::App app{"parallel3d_bench: times one parallel layout of GPT-2"};
  app.add_option("--tp", tp);
  app.add_option("--pp", pp);
  app.add_option("--virtual", virtual_stages);
  app.add_option("--partition", partition)->check(CLI::IsMember({"flops", "uniform"}));
  app.add_option("--micro", micro);
  app.add_option("--accum", accum);
  app.add_option("--seq", seq);
  app.add_option("--steps", steps);
  app.add_option("--ckpt", ckpt);
  app.add_option("--schedule", schedule)->check(CLI::IsMember({"1f1b", "gpipe"}));
  app.add_option("--layers", layers);
  app.add_option("--embd", embd);
  app.add_option("--heads", heads);
  app.add_option("--experts", experts);
  app.add_option("--expert-width", expert_width);
  app.add_option("--ep", ep);
  app.add_option("--vocab", vocab);
  CLI11_PARSE(app, argc, argv);
  if (!zt::backend_environment_ok()) return 2;
  std::unique_ptr<zt::MpiWorld> world;
  zt::ParallelGroups groups;
  int size = 1, rank = 0;
  if (zt::launched_by_mpi()) {
    auto w = zt::MpiWorld::init(zt::CommOptions{});
    if (!w.ok()) return std::fprintf(stderr, "%s\n", w.status().to_string().c_str()), 1;
    world = std::move(w).value();
    size = world->world().size();
    rank = world->world().rank();
  }
  const zt::RankGrid grid = zt::RankGrid::create(size, tp, size / (tp * pp), pp, ep).value();
  if (world) groups = std::move(zt::make_mpi_groups(*world, grid)).value();
  zt::TrainerOptions o;
  o.model.n_layer = layers;
  o.model.n_head = heads;
  o.model.n_embd = embd;
  o.model.vocab_size = vocab;
  o.model.padded_vocab_size = (vocab + 127) / 128 * 128;  // divisible by tp 2, 4, 8
  if (experts > 0) {
    o.model.set_family(zt::ModelFamily::kLlama);
    o.model.intermediate_size = 2 * expert_width;
    o.model.moe.num_experts = experts;
    o.model.moe.intermediate_size = expert_width;
    o.model.moe.gate.routing = zt::MoeRouting::kMixtral;
    o.model.moe.gate.k = 2;
    o.model.moe.gate.drop_tokens = o.model.moe.gate.use_rts = o.model.moe.gate.second_sampling = false;
  }
  o.micro_batch = micro;
  o.seq_len = seq;
  o.schedule.base_lr = 1e-4;
  o.micro_batches = accum;
  o.pipe_schedule = schedule == "gpipe" ? zt::PipeScheduleKind::kGPipe : zt::PipeScheduleKind::k1F1B;
  o.zero.reduce.bucket_elems = 6'250'000;
  if (ckpt) o.checkpoint.assign(static_cast<size_t>(layers), true);
  const auto method = partition == "uniform" ? zt::StagePartition::kUniform : zt::StagePartition::kFlops;
  auto layout = zt::layout_for_rank(o.model, grid, rank, method, virtual_stages);
  if (!layout.ok()) return std::fprintf(stderr, "%s\n", layout.status().to_string().c_str()), 1;
  o.layout = layout.value();
  auto created = zt::Trainer::create(o, world ? &groups : nullptr);
  if (!created.ok()) return std::fprintf(stderr, "%s\n", created.status().to_string().c_str()), 1;
  zt::Trainer& t = *created.value();
  const int dp_rank = grid.coord(rank).dp;
  std::vector<double> times, bubbles, over_compute, compute, waits;
  double comm_s = 0.0, a2a_s = 0.0;
  for (int s = 0; s < steps + 1; ++s) {
    const zt::testing::SyntheticStep data = zt::testing::synthetic_step(vocab, seq, micro, accum, dp_rank, grid.dp(), s, 5);
    const std::vector<zt::MicroBatch> mbs = data.micro_batches();
    for (zt::ProcessGroup* g : {groups.dp, groups.pp, groups.tp, groups.tied, groups.ep, groups.edp}) {
      if (g != nullptr) g->reset_stats();
    }
    zt::Stopwatch sw;
    auto st = t.step(mbs);
    if (!st.ok()) return std::fprintf(stderr, "%s\n", st.status().to_string().c_str()), 1;
    if (s == 0) continue;  // warm-up
    const double dt = sw.seconds();
    times.push_back(dt);
    bubbles.push_back(st->pipeline_wait_s / dt);
    over_compute.push_back(st->pipeline_wait_s / (st->forward_s + st->backward_s));
    compute.push_back(st->forward_s + st->backward_s);
    waits.push_back(st->pipeline_wait_s);
    for (zt::ProcessGroup* g : {groups.dp, groups.pp, groups.tp, groups.tied, groups.ep, groups.edp}) {
      if (g != nullptr && g->size() > 1) comm_s += g->stats().busy_seconds;
    }
    if (groups.ep != nullptr) a2a_s += groups.ep->stats().busy_seconds;  // at ZeRO-0: the token exchanges
  }
  std::sort(times.begin(), times.end());
  std::sort(bubbles.begin(), bubbles.end());
  std::sort(over_compute.begin(), over_compute.end());
  std::sort(compute.begin(), compute.end());
  std::sort(waits.begin(), waits.end());
  const zt::MemoryReport m = t.memory();
  const double vm = static_cast<double>(virtual_stages) * accum;
  const double ideal = pp > 1 ? (pp - 1) / (vm + pp - 1) : 0.0, ideal_compute = (pp - 1) / vm;
  std::printf("{\"rank\":%d,\"tp\":%d,\"pp\":%d,\"virtual\":%d,\"dp\":%d,\"ckpt\":%d,\"micro\":%d,\"accum\":%d,"
              "\"ms\":%.1f,\"comm_s_per_step\":%.3f,\"bubble\":%.3f,\"ideal_bubble\":%.3f,\"bubble_compute\":%.4f,"
              "\"ideal_bubble_compute\":%.4f,\"compute_ms\":%.1f,\"wait_ms\":%.1f,\"activation_mb\":%.1f,\"model_state_mb\":%.1f,\"peak_rss_mb\":%.1f,"
              "\"ep\":%d,\"all_to_all_s_per_step\":%.3f}\n",
              rank, tp, pp, virtual_stages, grid.dp(), ckpt, micro, accum, 1e3 * times[times.size() / 2],
              comm_s / steps, bubbles[bubbles.size() / 2], ideal, over_compute[over_compute.size() / 2], ideal_compute,
              1e3 * compute[compute.size() / 2], 1e3 * waits[waits.size() / 2], m.activation_bytes / 1048576.0, (m.param_bytes + m.grad_bytes + m.optimizer_bytes) / 1048576.0,
              m.peak_rss_bytes / 1048576.0, ep, a2a_s / steps);
  return 0;
}
