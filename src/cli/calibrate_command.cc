// `zerotrain calibrate`; see calibrate_command.h.
#include "cli/calibrate_command.h"
#include "cli/calibrate_device.h"
#include "cli/config_input.h"
#include "cli/exit_status.h"
#include "cli/launch_command.h"
#include "cli/plan_eval.h"
#include "engine/run_inputs.h"
#include "engine/run_config.h"
#include "comm/mpi_world.h"
#include "core/cpu_features.h"
#include "core/cpu_info.h"
#include "core/host_name.h"
#include "core/memory_stats.h"
#include "core/threads.h"
#include "engine/memory_estimate.h"
#include "engine/rank_sync.h"
#include "engine/trainer.h"
#include "planner/calibration.h"
#include "planner/comm_probe.h"
#include "planner/disk_probe.h"
#include "io/swap_arrays.h"
#include "planner/host_split.h"
#include "planner/op_timer.h"
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <set>

namespace zt {

namespace {

struct Shapes {
  GptConfig model;
  int seq_len = 1024;
};

// The models whose calls to measure: each --config's model and sequence length, or GPT-2 small.
StatusOr<std::vector<Shapes>> models(const CalibrateArgs& a) {
  std::vector<Shapes> out;
  for (const std::string& path : a.configs) {
    TrainCommandArgs t;
    t.config_path = path;
    ZT_ASSIGN_OR_RETURN(const Json root, load_config_json(t));
    ZT_ASSIGN_OR_RETURN(const ZtConfig cfg, load_run_config(root, 1));
    out.push_back({cfg.model, cfg.data.seq_len});
  }
  if (out.empty()) out.push_back({GptConfig{}, 1024});  // GptConfig's defaults are GPT-2 small
  return out;
}

std::vector<OpCall> calls(const CalibrateArgs& a, const std::vector<Shapes>& ms) {
  std::vector<OpCall> out;
  std::set<std::string> seen;
  for (const Shapes& s : ms) {
    for (const OpCall& o : calibration_calls(s.model, s.seq_len, a.micro_batches, a.tp_degrees)) {
      if (seen.insert(o.key()).second) out.push_back(o);
    }
  }
  for (int64_t n = 1 << 20; n <= (a.quick ? 4 << 20 : 64 << 20); n *= 4) {
    OpCall o;
    o.kind = OpKind::kAdamW;
    o.dims[0] = n;
    out.push_back(o);
  }
  return out;
}

// Per call key: the median of its samples over the passes (samples laid out [pass][call]).
std::map<std::string, double> median_over_passes(const std::vector<OpCall>& list, const std::vector<double>& samples) {
  std::map<std::string, double> out;
  const size_t passes = samples.size() / list.size();
  for (size_t i = 0; i < list.size(); ++i) {
    std::vector<double> v;
    for (size_t p = 0; p < passes; ++p) v.push_back(samples[p * list.size() + i]);
    std::sort(v.begin(), v.end());
    out[list[i].key()] = v[v.size() / 2];
  }
  return out;
}

// Each sample's maximum over the world's ranks (all ranks timed the same calls together).
StatusOr<std::vector<double>> slowest_rank(ProcessGroup& world, const std::vector<double>& samples) {
  const size_t n = samples.size(), P = static_cast<size_t>(world.size());
  ZT_ASSIGN_OR_RETURN(const std::vector<double> all, rows_of_ranks(&world, samples));  // [rank][sample]
  std::vector<double> out(n, 0.0);
  for (size_t r = 0; r < P; ++r) {
    for (size_t k = 0; k < n; ++k) out[k] = std::max(out[k], all[r * n + k]);
  }
  return out;
}

StatusOr<ComputeTable> measure_compute(const CalibrateArgs& a, ProcessGroup* world) {
  ZT_ASSIGN_OR_RETURN(const std::vector<Shapes> ms, models(a));
  const DType dt = a.precision == "bf16" ? DType::kBF16 : a.precision == "fp16" ? DType::kF16 : DType::kF32;
  ZT_ASSIGN_OR_RETURN(const Backend* backend, backend_for(a.device == "cuda" ? Device::kCuda : Device::kCpu, dt));
  ComputeTable t;
  t.device = a.device;
  t.threads = num_threads();
  t.concurrent_ranks = world != nullptr ? world->size() : 1;
  t.dtype = a.precision;
  // Every call is timed once in each of `passes` passes over the whole list, and the median
  // of its passes is kept: a shared machine's slow spell (seconds long) then lands in one
  // pass of a call, not in all its samples. Timing each call 3 times in a row had left
  // whole shapes 10-20 % slow in one calibration and not in the next.
  const int passes = a.quick ? 1 : 3;
  OpTimerOptions to;
  to.min_seconds = a.quick ? 0.005 : 0.02;
  to.min_reps = 1;
  if (world != nullptr) {  // every rank's call at once; the count is fixed so all agree
    to.min_seconds = 0;
    to.sync = [world] { (void)all_ranks_ready(world); };
  }
  const std::vector<OpCall> list = calls(a, ms);
  std::vector<double> samples(list.size() * static_cast<size_t>(passes));  // [pass][call]
  for (int pass = 0; pass < passes; ++pass) {
    for (size_t i = 0; i < list.size(); ++i) {
      ZT_ASSIGN_OR_RETURN(const OpMeasurement m, measure_op(*backend, list[i], to));
      samples[static_cast<size_t>(pass) * list.size() + i] = m.seconds;
      if (m.workspace_bytes > 0) {  // the largest of its passes: a later one may reuse freed pages
        double& w = t.workspace_bytes[list[i].key()];
        w = std::max(w, m.workspace_bytes);
      }
      if ((world == nullptr || world->rank() == 0) && (i + 1) % 20 == 0) {
        std::fprintf(stderr, "calibrate: pass %d/%d, %zu/%zu kernel calls\n", pass + 1, passes, i + 1, list.size());
      }
    }
  }
  t.seconds = median_over_passes(list, samples);
  if (world != nullptr) {
    ZT_ASSIGN_OR_RETURN(const std::vector<double> slowest, slowest_rank(*world, samples));
    t.slowest_seconds = median_over_passes(list, slowest);
  }
  return t;
}

// The resident memory a process has beyond what estimate counts: six steps (the heap's
// growth settles within them) of a small model (GEMMs large enough to touch the BLAS
// libraries' full blocking buffers, ~15M parameters), data
// parallel over `world` under mpirun (so MPI's and the ring's buffers and the
// communication thread's heap are in), minus its estimate. Runs first, so the kernel
// measurements' buffers are not in it. What stays resident after the steps, not their
// peak: the peak adds the largest GEMM's packed operands, which are this probe's shapes'
// (16 MiB for its 16384-class head) and not a planned model's; the compute table measures
// those per call (workspace_bytes) and estimate adds the planned model's own.
StatusOr<double> process_base(DType dt, ProcessGroup* world) {
  TrainerOptions o;
  o.model.n_layer = 2;
  o.model.n_head = 8;
  o.model.n_embd = 512;
  o.model.vocab_size = 16384;
  o.model.n_positions = 256;
  o.micro_batch = 4;
  o.seq_len = 256;
  ZT_ASSIGN_OR_RETURN(o.backend, backend_for(Device::kCpu, dt));
  o.checkpoint.assign(2, false);
  const int dp = world != nullptr ? world->size() : 1, rank = world != nullptr ? world->rank() : 0;
  ZT_ASSIGN_OR_RETURN(const MemoryEstimate e, estimate_rank_memory(o, dp, rank, 1, 0));
  ZT_ASSIGN_OR_RETURN(std::unique_ptr<Trainer> t, Trainer::create(o, world));
  std::vector<int32_t> tokens(static_cast<size_t>(o.micro_batch) * o.seq_len);
  for (size_t i = 0; i < tokens.size(); ++i) tokens[i] = static_cast<int32_t>((i * 31) % 16384);
  for (int step = 0; step < 6; ++step) ZT_RETURN_IF_ERROR(t->step({MicroBatch{tokens.data(), tokens.data()}}).status());
  return std::max(0.0, static_cast<double>(current_rss_bytes()) - static_cast<double>(e.total()));
}

// The swap directories to measure and how: --nvme-path at the probe's defaults; each
// --config's offload_optimizer nvme_path at that config's aio settings and geometry (its
// model's parameters a fp32 array, as one rank holds them at world 1, in as many chunks as
// its sub_group_size makes; the bytes capped at 2 GiB). quick (tests) probes 16 MiB;
// --nvme-bytes sets the bytes of each array. Keyed by disk_key: a directory spelled two ways
// is probed once.
StatusOr<std::map<std::string, DiskProbeOptions>> swap_dirs(const CalibrateArgs& a) {
  std::map<std::string, DiskProbeOptions> out;
  for (const std::string& d : a.nvme_paths) out.emplace(disk_key(d), DiskProbeOptions{});
  for (const std::string& path : a.configs) {
    TrainCommandArgs t;
    t.config_path = path;
    ZT_ASSIGN_OR_RETURN(const Json root, load_config_json(t));
    ZT_ASSIGN_OR_RETURN(const ZtConfig cfg, load_run_config(root, 1));
    const OffloadOptions& f = trainer_options(cfg).zero.offload;
    if (!f.swaps_optimizer()) continue;
    DiskProbeOptions& o = out[disk_key(f.optimizer_path)];
    o.aio = f.aio;
    o.pin = f.pin_memory;
    const size_t numel = static_cast<size_t>(cfg.model.num_parameters());  // the whole model: one rank's at world 1
    const size_t chunk = SwapArrays::effective_chunk_elems(f.sub_group_size, numel);
    o.chunks = (numel + chunk - 1) / chunk;  // the run's
    o.bytes_per_array = std::min(numel * sizeof(float), size_t{2} << 30);
  }
  double bytes = 0.0;  // check_args validated it
  if (!a.nvme_bytes.empty()) (void)parse_bytes(a.nvme_bytes, &bytes);
  for (auto& [dir, o] : out) {
    if (a.quick) o.bytes_per_array = size_t{16} << 20;
    if (bytes > 0) o.bytes_per_array = static_cast<size_t>(bytes);
  }
  return out;
}

// Each swap directory's rates (planner/disk_probe.h) into the calibration.
Status measure_disks(const CalibrateArgs& a, Calibration* cal) {
  ZT_ASSIGN_OR_RETURN(const auto dirs, swap_dirs(a));
  for (const auto& [dir, o] : dirs) {
    std::fprintf(stderr, "calibrate: swap directory %s, two arrays of %s\n", dir.c_str(), format_bytes(o.bytes_per_array).c_str());
    ZT_ASSIGN_OR_RETURN(cal->disks[dir], probe_swap_disk(dir, o));  // dir is its disk_key
  }
  return Status::OK();
}

// "intra" when every rank reports the same host name, else "inter".
StatusOr<std::string> link_of(ProcessGroup& world) {
  ZT_ASSIGN_OR_RETURN(const std::vector<std::string> hosts, strings_at_root(&world, host_name()));
  ZT_ASSIGN_OR_RETURN(const bool inter, root_decides(&world, std::set<std::string>(hosts.begin(), hosts.end()).size() > 1));
  return std::string(inter ? "inter" : "intra");
}

// "intra all_reduce alpha ... beta ...; priced from 7 sizes, within 6% at the 6 between them":
// how well the priced curve fits sizes it was not built from (plan refuses a layout whose
// communication that error could move by more than kMaxCommStepError of its step).
std::string fit_line(const std::string& link, const std::string& name, const CollectiveFit& f) {
  Collective c = Collective::kAllReduce;
  parse_collective(name, &c);
  char b[320];
  std::snprintf(b, sizeof(b), "%s %-14s alpha %8.2f us  beta %8.3f GB/s  (%d ranks; the line within %.0f%% of the points); "
                "priced from %zu sizes, within %.0f%% at the %zu sizes between them",
                link.c_str(), name.c_str(), f.alpha_s * 1e6, f.beta_s_per_byte > 0 ? 1e-9 / f.beta_s_per_byte : 0.0,
                f.ranks, 100.0 * f.max_rel_residual, f.points.size(), 100.0 * validation_error(f, c),
                f.validation_points.size());
  return b;
}

// The collectives' fits on `link`, replacing what the file had for it.
Status measure_link(const CalibrateArgs& a, ProcessGroup& world, const std::string& link, Calibration* cal) {
  CommProbeOptions po;
  if (a.quick) po.sizes = {4096, 65536, 1u << 20, 4u << 20};
  ZT_ASSIGN_OR_RETURN(cal->links[link], probe_collectives(world, po));
  return Status::OK();
}

void print_summary(const Calibration& c, const ComputeTable* t, const std::string& link, const std::string& path) {
  if (t != nullptr) {
    double best = 0;
    for (const auto& [key, s] : t->seconds) {
      OpCall o;
      if (parse_op_key(key, &o) && o.is_gemm()) best = std::max(best, o.work() / s);
    }
    std::printf("compute (%s %s, %d threads per rank, %d ranks at once): %zu kernel calls; best GEMM %.1f GFLOP/s\n",
                t->device.c_str(), t->dtype.c_str(), t->threads, t->concurrent_ranks, t->seconds.size(), best / 1e9);
  }
  if (!link.empty() && c.links.count(link) != 0) {
    for (const auto& [name, f] : c.links.at(link)) std::printf("%s\n", fit_line(link, name, f).c_str());
  }
  if (!c.device_link.device.empty()) {
    std::printf("device link (%s, pinned): host-to-device %.1f GB/s, device-to-host %.1f GB/s\n",
                c.device_link.device.c_str(), c.device_link.h2d_bytes_per_s / 1e9, c.device_link.d2h_bytes_per_s / 1e9);
  }
  for (const auto& [dir, d] : c.disks) {
    std::printf("swap directory %s: write %.2f GB/s, read + write %.2f GB/s, checksums %.1f GB/s (two arrays of %s in "
                "%zu chunks; %s%s)\n", dir.c_str(), d.write_bytes_per_s / 1e9, d.mixed_bytes_per_s / 1e9,
                d.checksum_bytes_per_s / 1e9, format_bytes(d.probe_bytes_per_array).c_str(), d.probe_chunks, d.io.c_str(),
                d.direct ? ", O_DIRECT" : ", buffered: the page cache is in these rates");
  }
  std::printf("process memory before a model: %s alone, %s under mpirun (%s with peers on other hosts)\nwrote %s\n",
              format_bytes(c.process_base_bytes).c_str(), format_bytes(c.mpi_process_base_bytes).c_str(),
              format_bytes(c.mpi_inter_process_base_bytes).c_str(), path.c_str());
}

// This calibration's arguments for one split's run: the same measurements into the same
// file, without --splits (a split of several ranks also fits the link within this host).
std::vector<std::string> split_command(const CalibrateArgs& a, const std::string& path) {
  std::vector<std::string> c = {"calibrate", "-o", path, "--precision", a.precision, "--device", a.device};
  if (a.skip_comm) c.push_back("--skip-comm");
  if (a.skip_compute) c.push_back("--skip-compute");
  for (const std::string& f : a.configs) c.insert(c.end(), {"--config", f});
  auto list = [](const std::vector<int>& v) {
    std::string out;
    for (int x : v) out += (out.empty() ? "" : ",") + std::to_string(x);
    return out;
  };
  c.insert(c.end(), {"--micro-batches", list(a.micro_batches), "--tp", list(a.tp_degrees)});
  if (a.quick) c.push_back("--quick");
  return c;
}

// --splits: one launch per split of this host's cores (planner/host_split.h), each rank
// bound to its own cores, every rank of it timing the kernels at once; each run merges its
// table into the file.
int calibrate_splits(const CalibrateArgs& a, const std::string& path) {
  const HostShape h = this_host_shape();
  for (const HostSplit& sp : host_splits(h)) {
    std::printf("calibrate: %s on this host (%s)\n", sp.describe().c_str(), h.describe().c_str());
    std::fflush(stdout);
    LaunchCommandArgs l;
    l.num_procs = sp.ranks;
    l.threads_per_rank = sp.threads;
    l.command = split_command(a, path);
    auto plan = plan_launch(l, self_binary());
    if (!plan.ok()) return report_error(plan.status(), kExitBadInput);
    if (const int rc = run_supervised(plan->argv, plan->hosts); rc != 0) {
      return report_error(Status::Internal("calibrate --splits: the run of " + sp.describe() + " failed (exit " +
                                           std::to_string(rc) + ")"),
                          kExitFailure);
    }
  }
  return kExitOk;
}

// The flags' values; with --device cuda, a usable GPU before anything is measured.
Status check_args(const CalibrateArgs& a) {
  if (a.precision != "fp32" && a.precision != "bf16" && a.precision != "fp16") {
    return Status::InvalidArgument("--precision: expected fp32, bf16 or fp16, got " + a.precision);
  }
  if (a.device != "cpu" && a.device != "cuda") return Status::InvalidArgument("--device: expected cpu or cuda, got " + a.device);
  double bytes = 0.0;
  if (!a.nvme_bytes.empty() && (!parse_bytes(a.nvme_bytes, &bytes) || bytes < kIoAlign)) {
    return Status::InvalidArgument("--nvme-bytes: expected bytes of at least 4096 (\"1GiB\", \"512MB\", \"1e9\"), got " +
                                   a.nvme_bytes);
  }
  if (a.device == "cuda" && !a.skip_compute) return backend_for(Device::kCuda, DType::kF32).status();
  return Status::OK();
}

}  // namespace

int run_calibrate(const CalibrateArgs& args) {
  if (Status s = check_args(args); !s.ok()) {
    return report_error(s, s.code() == StatusCode::kInvalidArgument ? kExitBadInput : kExitFailure);
  }
  const std::string path = args.output.empty() ? default_calibration_path() : args.output;
  if (args.splits) {
    if (launched_by_mpi()) return report_error(Status::InvalidArgument("--splits starts its own mpirun runs: run it "
                                                                       "without mpirun"), kExitBadInput);
    return calibrate_splits(args, std::filesystem::absolute(path).string());
  }
  Calibration cal;
  if (auto old = load_calibration(path); old.ok()) {
    cal = std::move(old).value();
  } else if (old.status().code() != StatusCode::kNotFound) {
    return report_error(old.status(), kExitBadInput);
  }
  std::unique_ptr<MpiWorld> mpi;
  if (launched_by_mpi()) {
    auto w = MpiWorld::init(CommOptions{});
    if (!w.ok()) return report_error(w.status(), kExitFailure);
    mpi = std::move(w).value();
  }
  ProcessGroup* world = mpi != nullptr && mpi->world().size() > 1 ? &mpi->world() : nullptr;
  const bool lead = world == nullptr || world->rank() == 0;
  std::string link;  // of the world's ranks: one host or several
  if (world != nullptr) {
    auto l = link_of(*world);
    if (!l.ok()) return report_error(l.status(), kExitFailure);
    link = *l;
  }
  auto base = process_base(args.precision == "bf16" ? DType::kBF16 : args.precision == "fp16" ? DType::kF16 : DType::kF32,
                           world);
  if (!base.ok()) return report_error(base.status(), kExitFailure);
  (world == nullptr ? cal.process_base_bytes
   : link == "inter" ? cal.mpi_inter_process_base_bytes
                     : cal.mpi_process_base_bytes) = *base;
  cal.cpu = cpu_info().model_name;
  cal.isa = isa_name(active_isa());
  cal.cores = cpu_info().logical_cpus;
  cal.gemm = cpu_backend().describe();
  ComputeTable table;
  if (!args.skip_compute) {
    auto t = measure_compute(args, world);
    if (!t.ok()) return report_error(t.status(), t.status().code() == StatusCode::kInvalidArgument ? kExitBadInput : kExitFailure);
    table = std::move(t).value();
    cal.put(table);
  }
  if (!args.skip_comm && world != nullptr) {
    if (Status s = measure_link(args, *world, link, &cal); !s.ok()) return report_error(s, kExitFailure);
  }
  if (!lead) return kExitOk;
  if (auto d = measure_device_link(); d.ok()) cal.device_link = *d;  // a GPU machine: offload's PCIe rates
  if (Status s = measure_disks(args, &cal); !s.ok()) return report_error(s, kExitFailure);
  if (Status s = save_calibration(path, cal); !s.ok()) return report_error(s, kExitFailure);
  print_summary(cal, args.skip_compute ? nullptr : &table, args.skip_comm ? "" : link, path);
  return kExitOk;
}

Command add_calibrate_command(CLI::App& app) {
  auto cal = std::make_shared<CalibrateArgs>();
  CLI::App* cb = app.add_subcommand("calibrate", "Measure kernel rates (and, under mpirun, collective latency and bandwidth) "
                                                  "for estimate and plan; merged into the calibration cache");
  cb->add_option("-c,--config", cal->configs, "Measure the kernel calls of this config's model (repeatable; none: GPT-2 small)");
  cb->add_option("--micro-batches", cal->micro_batches, "Micro-batch sizes to measure")->delimiter(',');
  cb->add_option("--tp", cal->tp_degrees, "Tensor-parallel degrees to measure")->delimiter(',');
  cb->add_option("--precision", cal->precision, "fp32, bf16 or fp16: the compute table to fill");
  cb->add_option("--device", cal->device, "cpu or cuda: whose kernels the compute table times (cuda: GPU 0's, for "
                                          "estimate and plan of a run on one GPU)");
  cb->add_option("-o,--output", cal->output, "Calibration file (default $ZT_CALIBRATION or ~/.cache/zerotrain/calibration.json)");
  cb->add_option("--nvme-path", cal->nvme_paths, "Measure this swap directory for NVMe offload (repeatable; a --config's "
                                                "offload_optimizer nvme_path is measured too)");
  cb->add_option("--nvme-bytes", cal->nvme_bytes, "Bytes of each of the two files the swap directory probe writes and "
                                                  "passes over (default 1GiB)");
  cb->add_flag("--skip-compute", cal->skip_compute, "Measure only the collectives");
  cb->add_flag("--skip-comm", cal->skip_comm, "Measure only the kernels");
  cb->add_flag("--quick", cal->quick, "Short timings and messages up to 4 MiB");
  cb->add_flag("--splits", cal->splits, "Kernels at every split of this host's cores into ranks x threads, each split's "
                                        "ranks bound and timing at once (one mpirun each), for `plan` to choose among");
  return {cb, [cal] { return run_calibrate(*cal); }, true};
}

}  // namespace zt
