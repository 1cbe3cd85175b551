// Judging one layout; see plan_eval.h.
#include "cli/plan_eval.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include <glob.h>
#include <sys/stat.h>

#include "engine/run_config.h"
#include "core/memory_stats.h"
#include "engine/parallel_setup.h"
#include "planner/op_list.h"
#include "planner/swap_model.h"

namespace zt {

namespace {

// Bytes of the files the data patterns name (0 for what does not exist yet).
double token_file_bytes(const DataConfig& d) {
  double sum = 0.0;
  for (const auto* list : {&d.train, &d.val}) {
    for (const std::string& pattern : *list) {
      glob_t g{};
      if (::glob(pattern.c_str(), 0, nullptr, &g) == 0) {
        for (size_t i = 0; i < g.gl_pathc; ++i) {
          struct stat st {};
          if (::stat(g.gl_pathv[i], &st) == 0) sum += static_cast<double>(st.st_size);
        }
      }
      ::globfree(&g);
    }
  }
  return sum;
}

// The largest workspace among the kernel calls of one micro-batch on the rank of o.layout
// (a GEMM library's packed operands, resident only while its call runs), as the host's
// compute table measured them; 0 without one, and on a device.
double step_workspace(const TrainerOptions& o, const ComputeTable* t) {
  if (t == nullptr) return 0.0;
  const int B = o.micro_batch, T = o.layout.local_seq(o.seq_len);
  double w = 0.0;
  for (const std::vector<OpCall>& ops :
       {forward_ops(o.model, o.layout, B, T), backward_ops(o.model, o.layout, B, T, o.checkpoint)}) {
    for (const OpCall& op : ops) w = std::max(w, t->workspace(op));
  }
  return w;
}

// Each pipeline stage's first rank's memory: its host part (with the process base, the
// largest kernel workspace and the token files) and, on a device, its device part; then
// the fits.
Status add_memory(const ZtConfig& cfg, const RankGrid& grid, const ClusterSpec& cluster, TrainerOptions o,
                  const Calibration* cal, LayoutEval* e) {
  const ComputeTable* t = cal == nullptr || e->on_device ? nullptr
                          : cal->table(cluster.threads_per_rank, cluster.procs_per_host,
                                       table_dtype(backend_or_cpu(o.backend).compute_dtype()));
  for (int s = 0; s < grid.pp(); ++s) {
    const int rank = grid.rank({0, 0, s});
    ZT_ASSIGN_OR_RETURN(o.layout, layout_for_rank(cfg.model, grid, rank, stage_partition(cfg), cfg.parallel.virtual_stages));
    const ZeroGroupPlace z = zero_group_place(grid, rank, o.zero.stage);
    ZT_ASSIGN_OR_RETURN(MemoryEstimate m, estimate_rank_memory(o, z.size, z.rank, grid.pp(), s));
    const double host = static_cast<double>(e->on_device ? m.host_bytes : m.total());
    const double workspace = step_workspace(o, t), rank_bytes = host + workspace + e->base_bytes + e->data_bytes;
    if (rank_bytes > e->rank_bytes_max) {
      e->rank_bytes_max = rank_bytes;
      e->workspace_bytes = workspace;
    }
    if (e->on_device) e->device_bytes_max = std::max(e->device_bytes_max, static_cast<double>(m.device_bytes()));
    e->stage_memory.push_back(m);
  }
  e->host_bytes_max = e->rank_bytes_max * cluster.procs_per_host;
  e->fits_host = cluster.mem_per_host <= 0 || e->host_bytes_max <= cluster.mem_per_host;
  e->fits_device = !e->on_device || cluster.mem_per_device <= 0 || e->device_bytes_max <= cluster.mem_per_device;
  return Status::OK();
}

// The pipeline stage whose rank updates the most elements: offload's largest host update.
const MemoryEstimate& largest_update(const LayoutEval& e) {
  const MemoryEstimate* m = &e.stage_memory[0];
  for (const MemoryEstimate& s : e.stage_memory) m = s.owned > m->owned ? &s : m;
  return *m;
}

// The offload terms of a device run (plan_eval.h): its rank that updates the most elements.
void price_offload(const TrainerOptions& o, const ClusterSpec& cl, const Calibration* cal, LayoutEval* e) {
  if (!e->on_device || o.zero.offload.optimizer_device == OffloadDevice::kNone || e->stage_memory.empty()) return;
  if (cal == nullptr) {
    e->offload_note = "no calibration (run `zerotrain calibrate` on the GPU machine)";
    return;
  }
  const MemoryEstimate* m = &largest_update(*e);
  const char* dtype = table_dtype(backend_or_cpu(o.backend).compute_dtype());
  const ComputeTable* t = cal->table(cl.threads_per_rank, cl.procs_per_host, dtype);
  OpCall adam;
  adam.kind = OpKind::kAdamW;
  adam.dims[0] = std::max<int64_t>(1, static_cast<int64_t>(m->owned));
  double seconds = 0.0;
  bool exact = false;
  if (o.optimizer != OptimizerKind::kAdamW) {
    e->offload_note = "the host update is priced for Adam and AdamW only";
  } else if (t == nullptr || !t->price(adam, &seconds, &exact)) {
    e->offload_note = std::string("no ") + dtype + " AdamW in the calibration (run `zerotrain calibrate --precision " +
                      dtype + "`)";
  } else if (!o.zero.offload.swaps_optimizer()) {
    e->offload_update_s = seconds;
  } else if (auto pass = price_swap_pass(*m, o.zero.offload.optimizer_path, seconds, *cal, &e->offload_disk_s);
             pass.ok()) {  // the host update streams the state through the swap directory
    e->offload_update_s = *pass;
  } else {
    e->offload_note = pass.status().message();
  }
  const DeviceLinkCalibration& link = cal->device_link;
  if (link.device.empty()) {
    e->offload_note += std::string(e->offload_note.empty() ? "" : "; ") + "PCIe not calibrated (run `zerotrain "
                       "calibrate` on the GPU machine: it measures the pinned copy rates)";
    return;
  }
  e->offload_pcie_s = static_cast<double>(m->pcie_bytes_per_step) / std::min(link.h2d_bytes_per_s, link.d2h_bytes_per_s);
}

// A device run whose optimizer runs on the host (offload_optimizer): its update is the
// offload pipeline's, at least the larger of the host update and the update's own PCIe
// bytes (price_offload's rank), instead of the device's AdamW. Unpriced where those terms
// are, or where bytes also cross during forward and backward (a host parameter shard's
// fetches, the host activation stash): their overlap with the kernels is not modelled.
StatusOr<StepPrediction> with_host_update(const TrainerOptions& o, const LayoutEval& e, const Calibration& cal,
                                          StepPrediction p) {
  if (!e.on_device || !ModelStates::updates_on_host(backend_or_cpu(o.backend), o.zero.offload)) return p;
  if (e.offload_update_s < 0 || e.offload_pcie_s < 0) {
    return Status::FailedPrecondition("the offloaded optimizer is not priced: " + e.offload_note);
  }
  for (const MemoryEstimate& s : e.stage_memory) {
    if (s.pcie_bytes_per_step != s.pcie_update_bytes) {
      return Status::Unimplemented("parameters or stashed activations cross PCIe during forward and backward "
                                   "(offload_param or cpu_checkpointing to host memory); how those copies overlap the "
                                   "kernels is not modelled, so the step is not predicted (the offload line prices "
                                   "the bytes)");
    }
  }
  const DeviceLinkCalibration& l = cal.device_link;
  const double pcie = static_cast<double>(largest_update(e).pcie_update_bytes) / std::min(l.h2d_bytes_per_s, l.d2h_bytes_per_s);
  const double update = std::max(e.offload_update_s, pcie);
  p.step_s += update - p.optimizer_s;
  p.optimizer_s = update;
  p.host_update = true;
  return p;
}

}  // namespace

StatusOr<LayoutEval> evaluate_layout(const ZtConfig& cfg, const ClusterSpec& cluster, const Calibration* cal) {
  const int world = cluster.world();
  ZT_ASSIGN_OR_RETURN(const RankGrid grid, RankGrid::create(world, cfg.parallel.tp, cfg.parallel.dp, cfg.parallel.pp, cfg.parallel.ep, cfg.parallel.sp,
                                                            cfg.zero.fetch.hpz_partition_size));
  const TrainerOptions o = trainer_options(cfg);
  LayoutEval e;
  e.on_device = !backend_or_cpu(o.backend).host();  // on a device only host_bytes is host memory
  e.base_bytes = cal != nullptr ? cal->base_bytes(world, cluster.hosts) : 0.0;
  e.data_bytes = token_file_bytes(cfg.data);
  ZT_RETURN_IF_ERROR(add_memory(cfg, grid, cluster, o, cal, &e));
  price_offload(o, cluster, cal, &e);
  if (cal == nullptr) {
    e.time_status = Status::NotFound("no calibration");
    return e;
  }
  if (o.flash_attention) {
    e.time_status = Status::Unimplemented(e.on_device ? "training.attention \"flash\" is the CPU's flash kernel; on "
                                                        "device cuda the backend picks flash attention itself (leave "
                                                        "the key out)"
                                                      : "calibrate times the materialized attention kernels, not "
                                                        "training.attention \"flash\" (memory is exact)");
    return e;
  }
  RunShape r;
  r.options = o;
  r.tp = grid.tp();
  r.dp = grid.dp();
  r.pp = grid.pp();
  r.partition = stage_partition(cfg);
  r.micro_batches = o.micro_batches;
  r.virtual_stages = cfg.parallel.virtual_stages;
  r.sp = grid.sp();
  auto p = predict_step(r, cluster, *cal);
  if (p.ok()) p = with_host_update(o, e, *cal, *p);
  if (p.ok()) {
    e.timed = true;
    e.time = *p;
  } else {
    e.time_status = p.status();
  }
  return e;
}

std::string format_step(const StepPrediction& p) {
  char b[512];
  std::snprintf(b, sizeof(b),
                "step %.3f s = compute %.3f + bubble %.3f + tp comm %.3f + pp comm %.3f + sp comm %.3f + "
                "ZeRO-3/2 comm %.3f + dp comm %.3f + optimizer %.3f",
                p.step_s, p.compute_s, p.bubble_s, p.tp_comm_s, p.pp_comm_s, p.sp_comm_s, p.zero3_comm_s, p.dp_comm_s,
                p.optimizer_s);
  return b;
}

std::vector<std::string> prediction_assumptions(const ClusterSpec& cluster, const Calibration& cal,
                                                const StepPrediction& p) {
  std::vector<std::string> a;
  char b[512];
  if (p.device == "cuda") {
    std::snprintf(b, sizeof(b), "compute: kernel times measured on the GPU (%s), each call from its start to the "
                  "stream's end, with 256 MiB of its memory rewritten before it; launches between kernels not counted",
                  cal.device_link.device.empty() ? "calibrate --device cuda" : cal.device_link.device.c_str());
    a.push_back(b);
  } else {
    std::snprintf(b, sizeof(b), "compute: kernel times measured on %s (%s) with %d thread(s) per rank, %d rank(s) at once",
                  cal.cpu.empty() ? "the calibrated CPU" : cal.cpu.c_str(), cal.isa.c_str(), p.table_threads, p.table_ranks);
    a.push_back(b);
  }
  if (p.host_update) {
    a.push_back("the optimizer on the host: the offload pipeline's lower bound, the larger of the host update and its "
                "PCIe traffic (their sum bounds it above: the offload line)");
  }
  if (p.device == "cpu" && (p.table_threads != cluster.threads_per_rank || p.table_ranks != cluster.procs_per_host)) {
    std::snprintf(b, sizeof(b), "the layout runs %d thread(s) per rank, %d rank(s) a host: not calibrated at that split, "
                  "priced from the nearest (zerotrain calibrate --splits measures every split of this host)",
                  cluster.threads_per_rank, cluster.procs_per_host);
    a.push_back(b);
  }
  if (p.extrapolated_ops > 0) {
    std::snprintf(b, sizeof(b), "%d of %d kernel calls were not calibrated at their shape: priced from the same "
                  "kernel's nearest measured shape, scaled by flops (zerotrain calibrate --config for exact figures)",
                  p.extrapolated_ops, p.ops);
    a.push_back(b);
  }
  if (p.comm_fit.rel_error >= 0) {
    std::snprintf(b, sizeof(b), "communication: the fits it used are within %.0f%% between their measured sizes, at "
                  "the sizes this step moves, weighted by time (most from %s near %.0f bytes)", 100 * p.comm_fit.rel_error,
                  p.comm_fit.what.c_str(), p.comm_fit.bytes);
    a.push_back(b);
  } else if (!p.links.empty()) {
    a.push_back("communication: its fits were not validated between their sizes (a calibration from before "
                "validation; zerotrain calibrate under mpirun measures them again)");
  }
  for (const std::string& link : p.links) {
    const CollectiveFit* f = cal.fit(link, Collective::kAllReduce);
    if (f == nullptr) continue;
    std::snprintf(b, sizeof(b), "network %s: calibrated alpha %.1f us, %.2f GB/s per link (all_reduce fit, %d ranks)",
                  link == "intra" ? "within a host" : "across hosts", f->alpha_s * 1e6,
                  f->beta_s_per_byte > 0 ? 1e-9 / f->beta_s_per_byte : 0.0, f->ranks);
    a.push_back(b);
  }
  if (const DiskCalibration* d = p.swap_dir.empty() ? nullptr : cal.disk(p.swap_dir); d != nullptr) {
    std::snprintf(b, sizeof(b), "NVMe offload: the optimizer pass over %s at its calibrated %.2f GB/s read + write, "
                  "%.2f GB/s write (%.3f s of disk a step), checksums at %.1f GB/s", p.swap_dir.c_str(),
                  d->mixed_bytes_per_s / 1e9, d->write_bytes_per_s / 1e9, p.swap_disk_s, d->checksum_bytes_per_s / 1e9);
    a.push_back(b);
  }
  std::snprintf(b, sizeof(b), "placement: %d host(s) x %d rank(s) of %d thread(s), filling hosts in order, each rank "
                "bound to its own cores (zerotrain launch); gradient reduction not overlapped with backward",
                cluster.hosts, cluster.procs_per_host, cluster.threads_per_rank);
  a.push_back(b);
  return a;
}

bool parse_bytes(const std::string& text, double* bytes) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || !(v > 0)) return false;
  const std::string unit(end);
  const struct {
    const char* name;
    double scale;
  } units[] = {{"", 1}, {"B", 1}, {"KB", 1e3}, {"KiB", 1024.0}, {"MB", 1e6}, {"MiB", 1048576.0}, {"GB", 1e9},
               {"GiB", 1073741824.0}, {"TB", 1e12}, {"TiB", 1099511627776.0}, {"G", 1073741824.0}};
  for (const auto& u : units) {
    if (unit == u.name) {
      *bytes = v * u.scale;
      return true;
    }
  }
  return false;
}

}  // namespace zt
