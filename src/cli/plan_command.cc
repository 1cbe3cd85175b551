// `zerotrain plan`; see plan_command.h.
#include "cli/plan_command.h"

#include <CLI/CLI.hpp>

#include <memory>

#include <algorithm>
#include <cstdio>
#include <map>

#include "cli/config_input.h"
#include "cli/exit_status.h"
#include "cli/plan_eval.h"
#include "planner/host_split.h"
#include "engine/run_inputs.h"
#include "engine/run_config.h"
#include "core/memory_stats.h"

namespace zt {

namespace {

struct Candidate {
  int tp = 1, pp = 1, dp = 1, zero = 0, micro = 1, accum = 1;
  bool ckpt = false;
  LayoutEval eval;
  ClusterSpec cl;  // the cluster it runs on: ranks per host and threads per rank
};

// The config root with one candidate's keys set (global batch kept).
Json candidate_root(Json root, int64_t global, int tp, int pp, int zero, int micro, bool ckpt, int n_layer) {
  root["train_batch_size"] = global;
  root["train_micro_batch_size_per_gpu"] = micro;
  root.erase("gradient_accumulation_steps");
  root["parallel"]["tp"] = tp;
  root["parallel"]["pp"] = pp;
  root["parallel"].erase("dp");
  root["zero_optimization"]["stage"] = zero;
  if (root.contains("pipeline")) root["pipeline"].erase("activation_checkpoint_interval");
  if (ckpt) {
    root["activation_checkpointing"]["number_checkpoints"] = n_layer;
  } else if (root.contains("activation_checkpointing")) {
    root["activation_checkpointing"].erase("number_checkpoints");
  }
  return root;
}

bool faster(const Candidate& a, const Candidate& b) {
  if (a.eval.timed != b.eval.timed) return a.eval.timed;
  if (a.eval.timed && a.eval.time.step_s != b.eval.time.step_s) return a.eval.time.step_s < b.eval.time.step_s;
  if (a.eval.device_bytes_max != b.eval.device_bytes_max) return a.eval.device_bytes_max < b.eval.device_bytes_max;
  return a.eval.rank_bytes_max < b.eval.rank_bytes_max;
}

std::string name(const Candidate& c) {
  char b[96];
  std::snprintf(b, sizeof(b), "dp%d pp%d tp%d z%d mb%d x%d%s", c.dp, c.pp, c.tp, c.zero, c.micro, c.accum,
                c.ckpt ? " ckpt" : "");
  return b;
}

Json candidate_json(const Candidate& c) {
  Json j = {{"layout", name(c)}, {"dp", c.dp}, {"pp", c.pp}, {"tp", c.tp}, {"zero_stage", c.zero},
            {"micro_batch", c.micro}, {"grad_accum", c.accum}, {"checkpointing", c.ckpt},
            {"rank_bytes_max", c.eval.rank_bytes_max}, {"fits", c.eval.fits()},
            {"procs_per_host", c.cl.procs_per_host}, {"threads_per_rank", c.cl.threads_per_rank},
            {"on_device", c.eval.on_device}, {"device_bytes_max", c.eval.device_bytes_max}};
  j["step_s"] = c.eval.timed ? Json(c.eval.time.step_s) : Json(nullptr);
  return j;
}

// A device run's rows give each rank's device memory and its host part; a CPU run's, the
// rank's memory.
void print_table(const std::vector<Candidate>& fit, int top, double tokens) {
  const bool dev = !fit.empty() && fit[0].eval.on_device;
  std::printf("%-4s %-30s %-9s %12s%s %10s %10s %9s %9s %9s %9s\n", "#", "layout", "rank x thr",
              dev ? "device/rank" : "memory/rank", dev ? "    host/rank" : "", "step s", "tokens/s", "compute", "bubble",
              "comm", "optim");
  for (size_t i = 0; i < fit.size() && static_cast<int>(i) < top; ++i) {
    const Candidate& c = fit[i];
    const StepPrediction& p = c.eval.time;
    const std::string split = std::to_string(c.cl.procs_per_host) + " x " + std::to_string(c.cl.threads_per_rank);
    const std::string mem = dev ? format_bytes(c.eval.device_bytes_max) : format_bytes(c.eval.rank_bytes_max);
    char host[24] = "";
    if (dev) std::snprintf(host, sizeof(host), " %12s", format_bytes(c.eval.rank_bytes_max).c_str());
    if (!c.eval.timed) {
      std::printf("%-4zu %-30s %-9s %12s%s %10s\n", i + 1, name(c).c_str(), split.c_str(), mem.c_str(), host, "-");
      continue;
    }
    std::printf("%-4zu %-30s %-9s %12s%s %10.3f %10.0f %9.3f %9.3f %9.3f %9.3f\n", i + 1, name(c).c_str(), split.c_str(),
                mem.c_str(), host, p.step_s, tokens / p.step_s, p.compute_s, p.bubble_s, p.comm_s(), p.optimizer_s);
  }
}

// The search: every dp x pp x tp x ZeRO stage x micro-batch x checkpointing layout of the
// global batch, priced by the planner; those that fit, and why the others do not.
struct Search {
  std::vector<Candidate> fit;
  std::map<std::string, int> refused;
  int considered = 0, too_big_host = 0, too_big_device = 0;
};

void consider(const Json& root, const ClusterSpec& cl, const Calibration* cal, Candidate c, int64_t global, int L,
              Search* s) {
  ++s->considered;
  auto cfg = load_run_config(candidate_root(root, global, c.tp, c.pp, c.zero, c.micro, c.ckpt, L), cl.world(),
                             RunPurpose::kPlan);
  auto e = cfg.ok() ? evaluate_layout(*cfg, cl, cal) : StatusOr<LayoutEval>(cfg.status());
  if (!e.ok()) {
    ++s->refused[e.status().message().substr(0, 160)];
    return;
  }
  c.eval = std::move(e).value();
  if (!c.eval.fits()) {
    ++(c.eval.fits_host ? s->too_big_device : s->too_big_host);
    return;
  }
  s->fit.push_back(std::move(c));
}

void search(const Json& root, const ClusterSpec& cl, const Calibration* cal, int64_t global, int L, int max_micro,
            Search* out) {
  Search& s = *out;
  const int world = cl.world();
  for (int tp = 1; tp <= cl.procs_per_host; tp *= 2) {
    for (int pp = 1; pp <= L && tp * pp <= world; ++pp) {
      if (world % (tp * pp) != 0) continue;
      const int dp = world / (tp * pp);
      if (global % dp != 0) continue;
      for (int micro = 1; micro <= max_micro && micro <= global / dp; micro *= 2) {
        if ((global / dp) % micro != 0) continue;
        for (int zero = 0; zero <= (dp > 1 ? 3 : 0); ++zero) {  // ZeRO shards over dp: nothing to shard at dp 1
          for (bool ckpt : {false, true}) {
            consider(root, cl, cal,
                     Candidate{tp, pp, dp, zero, micro, static_cast<int>(global / dp / micro), ckpt, {}, cl}, global, L,
                     &s);
          }
        }
      }
    }
  }
}

// The clusters to search: the one --procs-per-host, --world or --threads-per-rank fixes, or
// one per split of a host's cores (--cores-per-host and --sockets-per-host, else this
// machine's), so the plan picks ranks per host and threads per rank too. A device run has
// one rank per device: its ranks per host are --procs-per-host's (default 1), not a split.
StatusOr<std::vector<ClusterSpec>> clusters(const PlanArgs& a, const ClusterSpec& fixed, bool device_run,
                                            std::string* what) {
  const EstimateArgs& e = a.estimate;
  if (device_run || e.procs_per_host > 0 || e.world > 0 || e.threads_per_rank > 0) {
    *what = std::to_string(fixed.hosts) + " host(s) x " + HostSplit{fixed.procs_per_host, fixed.threads_per_rank}.describe();
    if (device_run) *what += ", one device a rank (--procs-per-host: the devices of a host)";
    return std::vector<ClusterSpec>{fixed};
  }
  if (a.sockets_per_host > 0 && a.cores_per_host == 0) return Status::InvalidArgument("--sockets-per-host needs --cores-per-host");
  HostShape h = this_host_shape();
  if (a.cores_per_host > 0) {
    ZT_ASSIGN_OR_RETURN(h, host_shape(std::max(1, a.sockets_per_host), a.cores_per_host));
  }
  std::vector<ClusterSpec> out;
  for (const HostSplit& sp : host_splits(h)) {
    ClusterSpec c = fixed;
    c.procs_per_host = sp.ranks;
    c.threads_per_rank = sp.threads;
    out.push_back(c);
  }
  *what = std::to_string(fixed.hosts) + " host(s) of " + h.describe() + ", every split into ranks x threads (" +
          std::to_string(out.size()) + ")";
  return out;
}

// The command that runs a candidate: launch with its ranks and threads, train with its keys.
std::string launch_line(const PlanArgs& a, const Candidate& c, int n_layer) {
  std::string line = "zerotrain launch" + std::string(c.cl.hosts > 1 ? " --hostfile HOSTFILE" : "") + " --num_procs " +
                     std::to_string(c.cl.procs_per_host) + " --threads-per-rank " +
                     std::to_string(c.cl.threads_per_rank) + " -- train --config " + a.estimate.config.config_path;
  std::vector<std::string> sets = a.estimate.config.overrides;
  for (const auto& [k, v] : {std::pair<const char*, int>{"parallel.tp", c.tp}, {"parallel.pp", c.pp}, {"parallel.dp", c.dp},
                             {"zero_optimization.stage", c.zero}, {"train_micro_batch_size_per_gpu", c.micro},
                             {"gradient_accumulation_steps", c.accum}}) {
    sets.push_back(std::string(k) + "=" + std::to_string(v));
  }
  if (c.ckpt) sets.push_back("activation_checkpointing.number_checkpoints=" + std::to_string(n_layer));
  for (const std::string& kv : sets) line += " --set " + kv;
  return line;
}

// The human-readable answer: the header, the table, the tally and what the times assume.
void print_plan(const PlanArgs& a, const ZtConfig& base, const std::string& cluster, const Calibration* cal,
                const std::string& cal_path, const Search& s) {
  const int64_t global = base.batch.train_batch_size;
  const double mem = s.fit.empty() ? 0.0 : s.fit[0].cl.mem_per_host;
  const double dmem = s.fit.empty() ? 0.0 : s.fit[0].cl.mem_per_device;
  std::printf("plan: %s, %.2f M parameters; global batch %lld x %d tokens; %s%s%s\n", base.model.to_string().c_str(),
              base.model.num_parameters() / 1e6, static_cast<long long>(global), base.data.seq_len, cluster.c_str(),
              mem > 0 ? (", " + format_bytes(mem) + " per host").c_str() : "",
              dmem > 0 ? (", " + format_bytes(dmem) + " per device").c_str() : "");
  print_table(s.fit, a.top, static_cast<double>(global) * base.data.seq_len);
  const int too_big = s.too_big_host + s.too_big_device;
  std::printf("%d layouts considered: %zu fit, %d need more memory than a host has, ", s.considered, s.fit.size(),
              s.too_big_host);
  if (base.device != Device::kCpu) std::printf("%d more than a device has, ", s.too_big_device);
  std::printf("%d refused:\n", s.considered - too_big - static_cast<int>(s.fit.size()));
  for (const auto& [why, n] : s.refused) std::printf("  %d x %s\n", n, why.c_str());
  if (!s.fit.empty() && s.fit[0].eval.on_device && !s.fit[0].eval.timed) {
    std::printf("step times: not predicted: %s; ranked by device memory\n", s.fit[0].eval.time_status.message().c_str());
  } else if (cal == nullptr) {
    std::printf("step times: not predicted: no calibration at %s (run `zerotrain calibrate`); ranked by memory\n",
                cal_path.c_str());
  } else if (!s.fit.empty() && s.fit[0].eval.timed) {
    for (const std::string& x : prediction_assumptions(s.fit[0].cl, *cal, s.fit[0].eval.time)) {
      std::printf("assumes %s\n", x.c_str());
    }
  } else if (!s.fit.empty()) {
    std::printf("step times: not predicted: %s\n", s.fit[0].eval.time_status.message().c_str());
  }
  if (!s.fit.empty()) std::printf("run the first: %s\n", launch_line(a, s.fit[0], base.model.n_layer).c_str());
}

}  // namespace

int run_plan(const PlanArgs& args) {
  auto cl_or = cluster_from_args(args.estimate);
  if (!cl_or.ok()) return report_error(cl_or.status(), kExitBadInput);
  auto root = load_config_json(args.estimate.config);
  if (!root.ok()) return report_error(root.status(), kExitBadInput);
  auto base = load_run_config(*root, cl_or->world(), RunPurpose::kPlan);
  if (!base.ok()) return report_error(base.status(), kExitBadInput);
  std::string what;
  auto cls = clusters(args, *cl_or, base->device != Device::kCpu, &what);
  if (!cls.ok()) return report_error(cls.status(), kExitBadInput);
  const std::string cal_path = args.estimate.calibration.empty() ? default_calibration_path() : args.estimate.calibration;
  auto cal_or = load_calibration(cal_path);
  if (!cal_or.ok() && (cal_or.status().code() != StatusCode::kNotFound || !args.estimate.calibration.empty())) {
    return report_error(cal_or.status(), kExitBadInput);
  }
  const Calibration* cal = cal_or.ok() ? &*cal_or : nullptr;
  Search s;
  for (const ClusterSpec& cl : *cls) {
    search(*root, cl, cal, base->batch.train_batch_size, base->model.n_layer, args.max_micro_batch, &s);
  }
  std::stable_sort(s.fit.begin(), s.fit.end(), faster);
  if (args.json) {
    Json j = {{"considered", s.considered}, {"fit", s.fit.size()}, {"too_big", s.too_big_host + s.too_big_device},
              {"too_big_device", s.too_big_device}, {"layouts", Json::array()}};
    for (size_t i = 0; i < s.fit.size() && static_cast<int>(i) < args.top; ++i) j["layouts"].push_back(candidate_json(s.fit[i]));
    if (!s.fit.empty()) j["launch"] = launch_line(args, s.fit[0], base->model.n_layer);
    std::printf("%s\n", j.dump().c_str());
    return kExitOk;
  }
  print_plan(args, *base, what, cal, cal_path, s);
  return kExitOk;
}

Command add_plan_command(CLI::App& app) {
  auto plan = std::make_shared<PlanArgs>();
  CLI::App* pl = app.add_subcommand("plan", "Search dp x pp x tp x ZeRO stage x micro-batch x checkpointing for a model on a "
                                             "cluster; rank the layouts that fit by predicted step time");
  pl->add_option("-c,--config", plan->estimate.config.config_path, "ds_config.json: the model, global batch and precision");
  pl->add_option("--set", plan->estimate.config.overrides, "Override a config key: key.path=value (JSON value), repeatable");
  pl->add_option("--hosts", plan->estimate.hosts, "Hosts of the cluster")->check(CLI::Range(1, 1 << 16));
  pl->add_option("--procs-per-host", plan->estimate.procs_per_host, "Ranks per host")->check(CLI::Range(1, 1 << 12));
  pl->add_option("--threads-per-rank", plan->estimate.threads_per_rank, "Threads per rank (default: cores / procs per host)")
      ->check(CLI::Range(1, 1 << 12));
  pl->add_option("--cores-per-host", plan->cores_per_host, "Physical cores of a host, split into ranks x threads when "
                                                           "--procs-per-host is not given (default: this machine's)")
      ->check(CLI::Range(1, 1 << 16));
  pl->add_option("--sockets-per-host", plan->sockets_per_host, "Sockets of a host, with --cores-per-host (default 1)")
      ->check(CLI::Range(1, 1 << 8));
  pl->add_option("--mem-per-host", plan->estimate.mem_per_host, "Memory of a host, e.g. 64GiB (default: no limit)");
  pl->add_option("--mem-per-device", plan->estimate.mem_per_device, "A device run: memory of one device, e.g. 80GiB "
                                                                    "(default: no limit)");
  pl->add_option("--calibration", plan->estimate.calibration, "Calibration file (default $ZT_CALIBRATION or ~/.cache/zerotrain/calibration.json)");
  pl->add_option("--top", plan->top, "Layouts to print")->check(CLI::Range(1, 100000));
  pl->add_option("--max-micro-batch", plan->max_micro_batch, "Largest micro-batch to try")->check(CLI::Range(1, 1 << 20));
  pl->add_flag("--json", plan->json, "One JSON object with the ranked layouts");
  return {pl, [plan] { return run_plan(*plan); }, true};
}

}  // namespace zt
