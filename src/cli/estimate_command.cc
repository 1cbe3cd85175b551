// `zerotrain estimate`: one line per rank with its part of the model and the bytes of
// each model state, its activations and its buffers.
#include "cli/estimate_command.h"

#include <algorithm>
#include <cstdio>
#include <string>

#include "cli/exit_status.h"
#include "cli/ps_command.h"
#include "cli/run_inputs.h"
#include "cli/run_setup.h"
#include "core/memory_stats.h"
#include "engine/memory_estimate.h"

namespace zt {

namespace {

// MemAvailable from /proc/meminfo, in bytes (0 if unknown).
double available_memory() {
  std::FILE* f = std::fopen("/proc/meminfo", "r");
  if (f == nullptr) return 0.0;
  char line[256];
  double kib = 0.0;
  while (std::fgets(line, sizeof line, f) != nullptr) {
    if (std::sscanf(line, "MemAvailable: %lf kB", &kib) == 1) break;
  }
  std::fclose(f);
  return kib * 1024.0;
}

void print_header(const ZtConfig& cfg, int world) {
  std::printf("model: %s, %.2f M parameters; %d ranks = dp %d x pp %d x tp %d; ZeRO stage %d; micro-batch %lld x %d "
              "tokens\n",
              cfg.model.to_string().c_str(), cfg.model.num_parameters() / 1e6, world, cfg.parallel.dp, cfg.parallel.pp,
              cfg.parallel.tp, cfg.zero.stage, static_cast<long long>(cfg.batch.micro_batch), cfg.data.seq_len);
  std::printf("%-6s %-14s %12s %12s %12s %12s %12s %12s %12s\n", "rank", "dp/pp/tp", "params", "parameters",
              "gradients", "optimizer", "activations", "buffers<=", "total<=");
}

}  // namespace

StatusOr<std::vector<MemoryEstimate>> estimate_all_ranks(const ZtConfig& cfg, int world) {
  ZT_ASSIGN_OR_RETURN(const RankGrid grid, RankGrid::create(world, cfg.parallel.tp, cfg.parallel.dp, cfg.parallel.pp));
  TrainerOptions o = trainer_options(cfg);
  std::vector<MemoryEstimate> out;
  for (int rank = 0; rank < world; ++rank) {
    ZT_ASSIGN_OR_RETURN(o.layout, layout_for_rank(cfg.model, grid, rank, stage_partition(cfg)));
    const GridCoord c = grid.coord(rank);
    ZT_ASSIGN_OR_RETURN(MemoryEstimate e, estimate_rank_memory(o, grid.dp(), c.dp, grid.pp(), c.pp));
    out.push_back(e);
  }
  return out;
}

int run_estimate(const EstimateArgs& args) {
  if (args.world < 1) return report_error(Status::InvalidArgument("--world must be at least 1"), kExitBadInput);
  auto root = load_config_json(args.config);
  if (!root.ok()) return report_error(root.status(), kExitBadInput);
  if (param_server_requested(root.value())) {
    return report_error(Status::Unimplemented("estimate covers all-reduce training; parameter-server runs are not "
                                              "estimated yet"),
                        kExitBadInput);
  }
  auto cfg_or = load_run_config(root.value(), args.world);
  if (!cfg_or.ok()) return report_error(cfg_or.status(), kExitBadInput);
  const ZtConfig& cfg = cfg_or.value();
  if (args.config.print_config) {
    print_resolved_config(cfg);
    return 0;
  }
  auto grid_or = RankGrid::create(args.world, cfg.parallel.tp, cfg.parallel.dp, cfg.parallel.pp);
  if (!grid_or.ok()) return report_error(grid_or.status(), kExitBadInput);
  const RankGrid& grid = grid_or.value();
  TrainerOptions o = trainer_options(cfg);
  print_header(cfg, args.world);
  print_config_notes(cfg);
  auto all = estimate_all_ranks(cfg, args.world);
  if (!all.ok()) return report_error(all.status(), kExitBadInput);
  double worst = 0.0, sum = 0.0;
  for (int rank = 0; rank < args.world; ++rank) {
    const GridCoord c = grid.coord(rank);
    const MemoryEstimate* e = &(*all)[static_cast<size_t>(rank)];
    const std::string where = std::to_string(c.dp) + "/" + std::to_string(c.pp) + "/" + std::to_string(c.tp);
    std::printf("%-6d %-14s %11.2fM %12s %12s %12s %12s %12s %12s\n", rank, where.c_str(), e->psi / 1e6,
                format_bytes(e->param_bytes).c_str(), format_bytes(e->grad_bytes).c_str(),
                format_bytes(e->optimizer_bytes).c_str(), format_bytes(e->activation_bytes).c_str(),
                format_bytes(e->buffer_bytes_max).c_str(), format_bytes(e->total()).c_str());
    worst = std::max(worst, static_cast<double>(e->total()));
    sum += static_cast<double>(e->total());
  }
  if (o.zero.offload.optimizer) {  // every rank offloads alike; rank 0's figures
    o.layout = layout_for_rank(cfg.model, grid, 0, stage_partition(cfg)).value();
    auto e = estimate_rank_memory(o, grid.dp(), 0, grid.pp(), 0);
    if (!e.ok()) return report_error(e.status(), kExitBadInput);
    std::printf("offload (NVMe, rank 0): %s on disk, %s of swap buffers in memory (in the totals); a step moves "
                "about %s from and %s to disk\n",
                format_bytes(e->disk_bytes).c_str(), format_bytes(e->offload_buffer_bytes).c_str(),
                format_bytes(e->disk_read_per_step).c_str(), format_bytes(e->disk_write_per_step).c_str());
  }
  std::printf("largest rank: %s; all %d ranks: %s; this machine has %s available\n", format_bytes(worst).c_str(),
              args.world, format_bytes(sum).c_str(), format_bytes(available_memory()).c_str());
  return kExitOk;
}

}  // namespace zt
