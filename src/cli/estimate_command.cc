// `zerotrain estimate`: the memory of every rank (one line per rank; per pipeline stage
// beyond 16 ranks) with its part of the model and the bytes of each model state, its
// activations and its buffers; then, with a calibration, the predicted step time and
// what the prediction assumed.
#include "cli/estimate_command.h"

#include <CLI/CLI.hpp>

#include <memory>

#include <algorithm>
#include <cstdio>
#include <string>

#include "cli/config_input.h"
#include "cli/exit_status.h"
#include "cli/plan_eval.h"
#include "cli/ps_command.h"
#include "engine/run_inputs.h"
#include "engine/run_config.h"
#include "core/cpu_info.h"
#include "core/memory_stats.h"
#include "engine/memory_estimate.h"

namespace zt {

namespace {

void print_header(const ZtConfig& cfg, int world) {
  const std::string ep = cfg.parallel.ep > 1 ? " (experts over ep " + std::to_string(cfg.parallel.ep) + ")" : "";
  std::printf("model: %s, %.2f M parameters; %d ranks = dp %d x pp %d x tp %d%s; ZeRO stage %d; micro-batch %lld x %d "
              "tokens\n",
              cfg.model.to_string().c_str(), cfg.model.num_parameters() / 1e6, world, cfg.parallel.dp, cfg.parallel.pp,
              cfg.parallel.tp, ep.c_str(), static_cast<int>(cfg.zero.stage), static_cast<long long>(cfg.batch.micro_batch),
              cfg.data.seq_len);
  std::printf("%-6s %-14s %12s %12s %12s %12s %12s %12s %12s\n", "rank", "dp/pp/tp", "params", "parameters",
              "gradients", "optimizer", "activations", "buffers<=", "total<=");
}

void print_row(int rank, const GridCoord& c, const MemoryEstimate& e) {
  const std::string where = std::to_string(c.dp) + "/" + std::to_string(c.pp) + "/" + std::to_string(c.tp);
  std::printf("%-6d %-14s %11.2fM %12s %12s %12s %12s %12s %12s\n", rank, where.c_str(), e.psi / 1e6,
              format_bytes(e.param_bytes).c_str(), format_bytes(e.grad_bytes).c_str(),
              format_bytes(e.optimizer_bytes).c_str(), format_bytes(e.activation_bytes).c_str(),
              format_bytes(e.buffer_bytes_max).c_str(), format_bytes(e.total()).c_str());
}

// The per-rank table (per stage beyond 16 ranks); returns the largest rank and the sum.
StatusOr<std::pair<double, double>> print_memory(const ZtConfig& cfg, int world, const RankGrid& grid) {
  ZT_ASSIGN_OR_RETURN(const std::vector<MemoryEstimate> all, estimate_all_ranks(cfg, world));
  double worst = 0.0, sum = 0.0;
  for (int rank = 0; rank < world; ++rank) {
    const GridCoord c = grid.coord(rank);
    const MemoryEstimate& e = all[static_cast<size_t>(rank)];
    if (world <= 16 || (c.tp == 0 && c.dp == 0)) print_row(rank, c, e);
    worst = std::max(worst, static_cast<double>(e.total()));
    sum += static_cast<double>(e.total());
  }
  if (world > 16) std::printf("(one row per pipeline stage: its tp-rank-0, dp-rank-0 rank, which holds the largest shard)\n");
  const TrainerOptions o = trainer_options(cfg);
  if (o.zero.offload.swaps_optimizer()) {  // every rank offloads alike; rank 0's figures
    const MemoryEstimate& e = all[0];
    std::printf("offload (NVMe, rank 0): %s on disk, %s of swap buffers in memory (in the totals); a step moves "
                "about %s from and %s to disk\n",
                format_bytes(e.disk_bytes).c_str(), format_bytes(e.offload_buffer_bytes).c_str(),
                format_bytes(e.disk_read_per_step).c_str(), format_bytes(e.disk_write_per_step).c_str());
  }
  const MemoryEstimate& e0 = all[0];
  if (e0.host_bytes > 0) {  // offload on a device: where the totals live
    std::printf("on the device (rank 0): %s; in host memory: %s (the host master, optimizer state, staging and "
                "stash; in the totals), %s of it page-locked; a step moves %s between them\n",
                format_bytes(e0.device_bytes()).c_str(), format_bytes(e0.host_bytes).c_str(),
                format_bytes(e0.pinned_bytes).c_str(), format_bytes(e0.pcie_bytes_per_step).c_str());
  } else if (!backend_or_cpu(o.backend).host()) {
    std::printf("on the device (rank 0): all of it, %s (no offload)\n", format_bytes(e0.device_bytes()).c_str());
  }
  return std::make_pair(worst, sum);
}

Json eval_json(const ZtConfig& cfg, const ClusterSpec& cl, const LayoutEval& e) {
  Json j = {{"world", cl.world()}, {"hosts", cl.hosts}, {"procs_per_host", cl.procs_per_host},
            {"threads_per_rank", cl.threads_per_rank}, {"dp", cfg.parallel.dp}, {"pp", cfg.parallel.pp},
            {"tp", cfg.parallel.tp}, {"zero_stage", static_cast<int>(cfg.zero.stage)}, {"micro_batch", cfg.batch.micro_batch},
            {"grad_accum", cfg.batch.grad_accum}, {"base_bytes", e.base_bytes}, {"workspace_bytes", e.workspace_bytes}, {"data_bytes", e.data_bytes},
            {"rank_bytes_max", e.rank_bytes_max}, {"host_bytes_max", e.host_bytes_max}, {"fits", e.fits()},
            {"device_bytes_max", e.device_bytes_max}, {"on_device", e.on_device}, {"fits_host", e.fits_host},
            {"fits_device", e.fits_device}};
  j["offload_update_s"] = e.offload_update_s >= 0 ? Json(e.offload_update_s) : Json(nullptr);
  j["offload_pcie_s"] = e.offload_pcie_s >= 0 ? Json(e.offload_pcie_s) : Json(nullptr);
  j["offload_disk_s"] = e.offload_disk_s >= 0 ? Json(e.offload_disk_s) : Json(nullptr);
  j["sp"] = cfg.parallel.sp;
  Json stages = Json::array();  // each pipeline stage's first rank, as the table prints it
  for (const MemoryEstimate& m : e.stage_memory) {
    stages.push_back({{"param_bytes", m.param_bytes}, {"grad_bytes", m.grad_bytes}, {"optimizer_bytes", m.optimizer_bytes},
                      {"activation_bytes", m.activation_bytes}, {"buffer_bytes_max", m.buffer_bytes_max},
                      {"host_bytes", m.host_bytes}, {"pinned_bytes", m.pinned_bytes},
                      {"pcie_bytes_per_step", m.pcie_bytes_per_step},
                      {"total_bytes", m.total()}});
  }
  j["stage_memory"] = stages;
  if (e.timed) {
    const StepPrediction& p = e.time;
    j["step_s"] = p.step_s;
    j["breakdown"] = {{"compute_s", p.compute_s}, {"bubble_s", p.bubble_s}, {"tp_comm_s", p.tp_comm_s},
                      {"pp_comm_s", p.pp_comm_s}, {"sp_comm_s", p.sp_comm_s}, {"zero3_comm_s", p.zero3_comm_s}, {"dp_comm_s", p.dp_comm_s},
                      {"optimizer_s", p.optimizer_s}, {"swap_disk_s", p.swap_disk_s}};
    j["extrapolated_ops"] = p.extrapolated_ops;
    j["comm_fit_rel_error"] = p.comm_fit.rel_error;
    j["ops"] = p.ops;
  } else {
    j["step_s"] = nullptr;
    j["why_no_time"] = e.time_status.message();
  }
  return j;
}

void print_time(const ZtConfig& cfg, const ClusterSpec& cl, const LayoutEval& e, const Calibration* cal,
                const std::string& cal_path) {
  if (!e.timed) {
    std::printf("step time: not predicted: %s\n",
                cal == nullptr && !e.on_device ? ("no calibration at " + cal_path + " (run `zerotrain calibrate`)").c_str()
                                               : e.time_status.message().c_str());
    return;
  }
  const double tokens = static_cast<double>(cfg.batch.train_batch_size) * cfg.data.seq_len;
  std::printf("predicted %s; %.0f tokens/s\n", format_step(e.time).c_str(), tokens / e.time.step_s);
  for (const std::string& a : prediction_assumptions(cl, *cal, e.time)) std::printf("  assumes %s\n", a.c_str());
}

// " of 64.00 GiB: fits" (or DOES NOT FIT) against a limit; `unchecked` without one.
std::string verdict(double limit, bool fits, const char* unchecked) {
  if (limit <= 0) return unchecked;
  return " of " + format_bytes(limit) + (fits ? ": fits" : ": DOES NOT FIT");
}

// Whether the largest rank fits: per host (procs x its host part, with the process base,
// its largest kernel workspace and the token files), and on a device its device part.
void print_fits(const ClusterSpec& cl, const LayoutEval& e, bool calibrated) {
  if (cl.mem_per_host > 0 || calibrated) {
    const double rank_host = e.rank_bytes_max - e.base_bytes - e.workspace_bytes - e.data_bytes;  // on a device: host part
    std::printf("per host: %d ranks x (largest %s + process %s + kernel workspace %s + token files %s) <= %s%s\n",
                cl.procs_per_host, format_bytes(rank_host).c_str(), format_bytes(e.base_bytes).c_str(),
                format_bytes(e.workspace_bytes).c_str(), format_bytes(e.data_bytes).c_str(),
                format_bytes(e.host_bytes_max).c_str(), verdict(cl.mem_per_host, e.fits_host, "").c_str());
  }
  if (e.on_device) {
    std::printf("per device: largest rank %s%s\n", format_bytes(e.device_bytes_max).c_str(),
                verdict(cl.mem_per_device, e.fits_device, " (--mem-per-device checks it against the card)").c_str());
  }
}

// A device run with optimizer offload: what the host update and its PCIe traffic cost a
// step, as far as the calibration prices them.
void print_offload(const LayoutEval& e, const Calibration* cal) {
  if (e.offload_update_s < 0 && e.offload_pcie_s < 0 && e.offload_note.empty()) return;
  std::string line = "offload per step (largest rank):";
  char b[256];
  if (e.offload_update_s >= 0 && e.offload_disk_s >= 0) {
    std::snprintf(b, sizeof(b), " the host update %.3f s (this host's calibrated AdamW, streaming the state through "
                  "the swap directory: %.3f s of disk);", e.offload_update_s, e.offload_disk_s);
    line += b;
  } else if (e.offload_update_s >= 0) {
    std::snprintf(b, sizeof(b), " the host update %.3f s (this host's calibrated AdamW);", e.offload_update_s);
    line += b;
  }
  if (e.offload_pcie_s >= 0) {
    const DeviceLinkCalibration& l = cal->device_link;
    std::snprintf(b, sizeof(b), " PCIe %.3f s (%.1f GB/s, the slower pinned direction measured on %s);", e.offload_pcie_s,
                  std::min(l.h2d_bytes_per_s, l.d2h_bytes_per_s) / 1e9, l.device.c_str());
    line += b;
  }
  if (e.offload_update_s >= 0 && e.offload_pcie_s >= 0) {
    std::snprintf(b, sizeof(b), " the pipeline overlaps them, so offload adds %.3f to %.3f s to the device's step "
                  "(a step predicted from a GPU table below takes the lower)",
                  std::max(e.offload_update_s, e.offload_pcie_s), e.offload_update_s + e.offload_pcie_s);
    line += b;
  }
  if (!e.offload_note.empty()) line += " not priced: " + e.offload_note;
  std::printf("%s\n", line.c_str());
}

}  // namespace

StatusOr<ClusterSpec> cluster_from_args(const EstimateArgs& args) {
  ClusterSpec c;
  if (args.hosts > 0 || args.procs_per_host > 0) {
    c.hosts = std::max(1, args.hosts);
    c.procs_per_host = std::max(1, args.procs_per_host);
    if (args.world > 0 && args.world != c.world()) {
      return Status::InvalidArgument("--world " + std::to_string(args.world) + " is not --hosts x --procs-per-host = " +
                                     std::to_string(c.world()));
    }
  } else {
    c.procs_per_host = std::max(1, args.world);
  }
  c.threads_per_rank = args.threads_per_rank > 0 ? args.threads_per_rank
                                                 : std::max(1, cpu_info().logical_cpus / c.procs_per_host);
  if (!args.mem_per_host.empty() && !parse_bytes(args.mem_per_host, &c.mem_per_host)) {
    return Status::InvalidArgument("--mem-per-host: expected a size such as 64GiB or 512MB, got \"" +
                                   args.mem_per_host + "\"");
  }
  if (!args.mem_per_device.empty() && !parse_bytes(args.mem_per_device, &c.mem_per_device)) {
    return Status::InvalidArgument("--mem-per-device: expected a size such as 80GiB or 512MB, got \"" +
                                   args.mem_per_device + "\"");
  }
  return c;
}

StatusOr<std::vector<MemoryEstimate>> estimate_all_ranks(const ZtConfig& cfg, int world) {
  ZT_ASSIGN_OR_RETURN(const RankGrid grid, RankGrid::create(world, cfg.parallel.tp, cfg.parallel.dp, cfg.parallel.pp, cfg.parallel.ep, cfg.parallel.sp,
                                  cfg.zero.fetch.hpz_partition_size));
  TrainerOptions o = trainer_options(cfg);
  std::vector<MemoryEstimate> out;
  for (int rank = 0; rank < world; ++rank) {
    ZT_ASSIGN_OR_RETURN(o.layout, layout_for_rank(cfg.model, grid, rank, stage_partition(cfg), cfg.parallel.virtual_stages));
    const GridCoord c = grid.coord(rank);
    const ZeroGroupPlace z = zero_group_place(grid, rank, o.zero.stage);
    ZT_ASSIGN_OR_RETURN(MemoryEstimate e, estimate_rank_memory(o, z.size, z.rank, grid.pp(), c.pp));
    out.push_back(e);
  }
  return out;
}

int run_estimate(const EstimateArgs& args) {
  auto cl_or = cluster_from_args(args);
  if (!cl_or.ok()) return report_error(cl_or.status(), kExitBadInput);
  const ClusterSpec cl = *cl_or;
  const int world = cl.world();
  auto root = load_config_json(args.config);
  if (!root.ok()) return report_error(root.status(), kExitBadInput);
  if (param_server_requested(root.value())) {
    return report_error(Status::Unimplemented("estimate covers all-reduce training; parameter-server runs are not "
                                              "estimated yet"),
                        kExitBadInput);
  }
  auto cfg_or = load_run_config(root.value(), world, RunPurpose::kPlan);
  if (!cfg_or.ok()) return report_error(cfg_or.status(), kExitBadInput);
  const ZtConfig& cfg = cfg_or.value();
  if (args.config.print_config) {
    print_resolved_config(cfg);
    return 0;
  }
  auto grid_or = RankGrid::create(world, cfg.parallel.tp, cfg.parallel.dp, cfg.parallel.pp, cfg.parallel.ep, cfg.parallel.sp,
                                  cfg.zero.fetch.hpz_partition_size);
  if (!grid_or.ok()) return report_error(grid_or.status(), kExitBadInput);
  const std::string cal_path = args.calibration.empty() ? default_calibration_path() : args.calibration;
  auto cal_or = load_calibration(cal_path);
  if (!cal_or.ok() && (cal_or.status().code() != StatusCode::kNotFound || !args.calibration.empty())) {
    return report_error(cal_or.status(), kExitBadInput);
  }
  const Calibration* cal = cal_or.ok() ? &cal_or.value() : nullptr;
  auto eval = evaluate_layout(cfg, cl, cal);
  if (!eval.ok()) return report_error(eval.status(), kExitBadInput);
  if (args.json) {
    std::printf("%s\n", eval_json(cfg, cl, *eval).dump().c_str());
    return kExitOk;
  }
  print_header(cfg, world);
  print_config_notes(cfg);
  auto mem = print_memory(cfg, world, *grid_or);
  if (!mem.ok()) return report_error(mem.status(), kExitBadInput);
  std::printf("largest rank: %s; all %d ranks: %s; this machine has %s available\n", format_bytes(mem->first).c_str(),
              world, format_bytes(mem->second).c_str(), format_bytes(static_cast<double>(available_host_memory())).c_str());
  print_fits(cl, *eval, cal != nullptr);
  print_offload(*eval, cal);
  print_time(cfg, cl, *eval, cal, cal_path);
  return kExitOk;
}

Command add_estimate_command(CLI::App& app) {
  auto est = std::make_shared<EstimateArgs>();
  CLI::App* m = app.add_subcommand("estimate", "Memory every rank of a run needs, from its configuration, before launching it");
  m->add_option("-c,--config", est->config.config_path, "ds_config.json with model/data/training sections (none: the demo)");
  m->add_option("--set", est->config.overrides, "Override a config key: key.path=value (JSON value), repeatable");
  m->add_option("--world", est->world, "Ranks of the run (mpirun -np)")->check(CLI::Range(1, 1 << 20));
  m->add_flag("--print-config", est->config.print_config, "Print the resolved configuration as JSON and stop");
  m->add_option("--hosts", est->hosts, "Hosts of the cluster (with --procs-per-host)")->check(CLI::Range(1, 1 << 16));
  m->add_option("--procs-per-host", est->procs_per_host, "Ranks per host")->check(CLI::Range(1, 1 << 12));
  m->add_option("--threads-per-rank", est->threads_per_rank, "Threads per rank (default: cores / procs per host)")
      ->check(CLI::Range(1, 1 << 12));
  m->add_option("--mem-per-host", est->mem_per_host, "Memory of a host, e.g. 64GiB: says whether the layout fits");
  m->add_option("--mem-per-device", est->mem_per_device, "A device run: memory of one device, e.g. 80GiB: says "
                                                         "whether each rank's device part fits");
  m->add_option("--calibration", est->calibration, "Calibration file (default $ZT_CALIBRATION or ~/.cache/zerotrain/calibration.json)");
  m->add_flag("--json", est->json, "One JSON object: memory of the largest rank and the predicted step");
  return {m, [est] { return run_estimate(*est); }, false};
}

}  // namespace zt
