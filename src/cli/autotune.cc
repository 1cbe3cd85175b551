// zerotrain's answer to DeepSpeed's autotuner; see autotune.h.


#include "cli/autotune.h"
#include "cli/doctor_probes.h"
#include "cli/plan_eval.h"
#include "engine/run_inputs.h"
#include "engine/run_config.h"
#include "core/timer.h"
#include "engine/timed_trial.h"
#include "io/atomic_file.h"
#include "io/filesystem.h"
#include <algorithm>
#include <cstdio>
#include <filesystem>

namespace zt {

namespace {

struct Experiment {
  int stage = 0;
  int64_t micro = 1, gas = 1;
  Json root;              // the experiment's config
  Status status;          // why it did not run
  double latency_s = 0.0;  // mean step time over the profiled steps, mean over ranks
  double throughput = 0.0;
  std::string name() const {
    return "z" + std::to_string(stage) + "_gas" + std::to_string(gas) + "_tmbspg" + std::to_string(micro);
  }
};

Json experiment_root(Json root, int stage, int64_t micro, int64_t gas, int dp) {
  root["zero_optimization"]["stage"] = stage;
  root["train_micro_batch_size_per_gpu"] = micro;
  root["gradient_accumulation_steps"] = gas;
  root["train_batch_size"] = micro * gas * dp;
  root.erase("autotuning");
  return root;
}

// The largest micro-batch size up to `limit` the memory estimator fits in this host's
// available memory, at the config's stage (at least 1).
int64_t largest_fitting_micro(const AutotuneRun& run, int64_t limit) {
  const MemInfo mem = read_meminfo();
  ClusterSpec cl;
  cl.procs_per_host = run.grid->world_size();
  cl.mem_per_host = mem.known ? static_cast<double>(mem.available) : 0.0;
  auto fits = [&](int64_t m) {
    auto cfg = load_run_config(experiment_root(run.cfg->resolved, static_cast<int>(run.cfg->zero.stage), m, 1, run.cfg->parallel.dp),
                               run.grid->world_size());
    auto e = cfg.ok() ? evaluate_layout(*cfg, cl, nullptr) : StatusOr<LayoutEval>(cfg.status());
    return e.ok() && e->fits();
  };
  int64_t lo = 1, hi = 1;
  while (hi < limit && fits(std::min(limit, hi * 2))) hi = std::min(limit, hi * 2);
  lo = hi;
  for (int64_t step = hi / 2; step >= 1 && hi < limit; step /= 2) {
    if (lo + step <= limit && fits(lo + step)) lo += step;
  }
  return lo;
}

// DeepSpeed's get_tuning_micro_batch_size_list between max(min, max / 2) and max.
std::vector<int64_t> micro_list(const AutotuningConfig& a, int64_t max_mbs) {
  const int64_t lo = std::max(a.min_micro_batch, max_mbs / 2);
  const int64_t stride = std::max<int64_t>(1, (max_mbs - lo) / a.num_tuning_micro_batch_sizes);
  std::vector<int64_t> out;
  for (int64_t m = lo; m < max_mbs; m += stride) out.push_back(m);
  out.push_back(max_mbs);
  return out;
}

std::vector<Experiment> experiments(const AutotuneRun& run) {
  const ZtConfig& c = *run.cfg;
  const AutotuningConfig& a = c.autotuning;
  const int dp = c.parallel.dp;
  const bool fixed_global = c.source.contains("train_batch_size") && !c.batch.train_batch_size_auto;
  std::vector<int64_t> micros = a.micro_batches;
  int64_t max_mbs = 0;
  if (micros.empty()) {
    max_mbs = largest_fitting_micro(run, fixed_global ? std::min(a.max_micro_batch, c.batch.train_batch_size / dp)
                                                      : a.max_micro_batch);
    micros = micro_list(a, max_mbs);
  }
  max_mbs = *std::max_element(micros.begin(), micros.end());
  const int64_t per_rank = a.max_train_batch_size > 0 ? a.max_train_batch_size / dp : max_mbs * std::max<int64_t>(1, c.batch.grad_accum);
  std::vector<Experiment> out;
  for (int stage : a.stages.empty() ? std::vector<int>{static_cast<int>(c.zero.stage)} : a.stages) {
    for (int64_t m : micros) {
      Experiment e;
      e.stage = stage;
      e.micro = m;
      if (fixed_global && (c.batch.train_batch_size / dp) % m != 0) continue;
      e.gas = fixed_global ? c.batch.train_batch_size / dp / m : std::max<int64_t>(1, per_rank / m);
      e.root = experiment_root(c.resolved, stage, m, e.gas, dp);
      if (static_cast<int64_t>(out.size()) < a.tuner_num_trials) out.push_back(std::move(e));
    }
  }
  return out;
}

// Runs end_profile_step steps of one experiment on every rank and times the profiled ones.
Status trial(const AutotuneRun& run, Experiment* e) {
  const AutotuningConfig& a = run.cfg->autotuning;
  ZT_ASSIGN_OR_RETURN(const ZtConfig cfg, load_run_config(e->root, run.grid->world_size()));
  const TrialPlacement at{run.grid, run.rank, run.partition, run.groups};
  ZT_ASSIGN_OR_RETURN(e->latency_s, timed_trial(cfg, at, *run.train, a.end_profile_step, a.start_profile_step));
  e->throughput = static_cast<double>(cfg.batch.train_batch_size) / e->latency_s;
  return Status::OK();
}

Status write_results(const AutotuneRun& run, const std::vector<Experiment>& exps, const Experiment& best, double tuned_s) {
  const AutotuningConfig& a = run.cfg->autotuning;
  std::error_code ec;
  if (a.overwrite) {
    std::filesystem::remove_all(a.results_dir, ec);
    std::filesystem::remove_all(a.exps_dir, ec);
  }
  ZT_RETURN_IF_ERROR(make_dirs(a.exps_dir));
  std::string table = "| tuning_space | num_experiments | best_metric_val | best_exp_name |\n|:--|--:|--:|:--|\n";
  for (const Experiment& e : exps) {
    const std::string dir = a.results_dir + "/" + e.name();
    ZT_RETURN_IF_ERROR(make_dirs(dir));
    ZT_RETURN_IF_ERROR(write_file_atomic(dir + "/ds_config.json", e.root.dump()));
    const Json record = {{"name", e.name()}, {"ds_config", e.root}, {"num_gpus", run.grid->world_size()}, {"num_nodes", 1}};
    ZT_RETURN_IF_ERROR(write_file_atomic(a.exps_dir + "/" + e.name() + ".json", record.dump()));
    if (!e.status.ok()) {
      ZT_RETURN_IF_ERROR(write_file_atomic(dir + "/stderr.log", e.status.message() + "\n"));
      continue;
    }
    const double us = e.latency_s * 1e6;
    ZT_RETURN_IF_ERROR(write_file_atomic(dir + "/metrics.json", Json{{"latency", us}, {"step", us}, {"throughput", e.throughput}, {"rank", 0}}.dump()));
  }
  const double metric = a.metric == "latency" ? best.latency_s * 1e6 : best.throughput;
  char row[256];
  std::snprintf(row, sizeof(row), "| z%d | %zu | %.6g | %s |\n| global | %zu | %.6g | %s |\n", best.stage, exps.size(), metric,
                best.name().c_str(), exps.size(), metric, best.name().c_str());
  char tail[160];
  std::snprintf(tail, sizeof(tail), "\n\nTuning completed in %.3f s. Total number of experiments: %zu.\n", tuned_s, exps.size());
  ZT_RETURN_IF_ERROR(write_file_atomic(a.results_dir + "/summary.txt", table + row + tail));
  ZT_RETURN_IF_ERROR(write_file_atomic(a.results_dir + "/ds_config_optimal.json", best.root.dump()));
  return write_file_atomic(a.results_dir + "/cmd_optimal.txt",
                           "zerotrain train --config " + a.results_dir + "/ds_config_optimal.json\n");
}

}  // namespace

StatusOr<Json> autotune(const AutotuneRun& run) {
  const AutotuningConfig& a = run.cfg->autotuning;
  const std::string optimal = a.results_dir + "/ds_config_optimal.json";
  if (run.resume) {  // the tuned run continues with the configuration it was tuned to
    auto text = read_file(optimal, 1 << 20);
    if (!text.ok()) {
      return Status::InvalidArgument("/autotuning: resuming a tuned run needs its " + optimal + " (" +
                                     text.status().message() + ")");
    }
    ZT_ASSIGN_OR_RETURN(Json best, parse_json_strict(text.value(), optimal));
    if (run.lead) std::printf("autotuning: resumed run: trains with %s\n", optimal.c_str());
    return best;
  }
  Stopwatch clock;
  std::vector<Experiment> exps = experiments(run);
  if (exps.empty()) return Status::InvalidArgument("/autotuning: no micro-batch size divides the configured train_batch_size");
  const Experiment* best = nullptr;
  for (Experiment& e : exps) {
    e.status = trial(run, &e);
    if (run.lead) {
      std::printf("autotuning: %s %s\n", e.name().c_str(),
                  e.status.ok() ? ("latency " + std::to_string(e.latency_s) + " s, throughput " + std::to_string(e.throughput) + " samples/s").c_str()
                                : ("failed: " + e.status.message()).c_str());
    }
    if (!e.status.ok()) continue;
    const bool better = best == nullptr || (a.metric == "latency" ? e.latency_s < best->latency_s : e.throughput > best->throughput);
    if (better) best = &e;
  }
  if (best == nullptr) return Status::InvalidArgument("/autotuning: every experiment failed; the first: " + exps[0].status.message());
  if (run.lead) {
    ZT_RETURN_IF_ERROR(write_results(run, exps, *best, clock.seconds()));
    std::printf("autotuning: best %s by %s; trains with %s/ds_config_optimal.json\n", best->name().c_str(), a.metric.c_str(),
                a.results_dir.c_str());
  }
  return best->root;
}

}  // namespace zt
