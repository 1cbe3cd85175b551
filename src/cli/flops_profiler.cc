// The flops profiler's report; see flops_profiler.h.
#include "cli/flops_profiler.h"

#include "cli/comms_logger.h"
#include "io/atomic_file.h"

#include <algorithm>
#include <cstdio>
#include <numeric>
#include <vector>

namespace zt {

namespace {

struct Module {
  std::string name;
  double params = 0, flops = 0, fwd_s = 0, bwd_s = 0;
  double latency() const { return fwd_s + bwd_s; }
};

std::string si(double v, const char* unit) {
  const char* p[] = {"", " K", " M", " G", " T", " P"};
  int i = 0;
  while (v >= 1000.0 && i < 5) {
    v /= 1000.0;
    ++i;
  }
  char b[48];
  std::snprintf(b, sizeof(b), "%.2f%s%s", v, p[i], unit);
  return b;
}

std::string ms(double s) {
  char b[32];
  std::snprintf(b, sizeof(b), "%.2f ms", 1e3 * s);
  return b;
}

std::vector<Module> modules(const ZtConfig& c, const Trainer& t, double optimizer_s) {
  const GptConfig& g = c.model;
  const LayerTimes& lt = t.layer_times();
  const ParamTable& table = t.param_table();
  const double tokens = static_cast<double>(c.batch.micro_batch) * c.data.seq_len * c.batch.grad_accum;
  const double C = g.n_embd, T = c.data.seq_len, V = g.vocab_size;
  std::vector<Module> out;
  out.push_back({"wte+wpe", static_cast<double>(table.layer_range(kEmbeddingLayer).size()), 0.0, lt.forward_s[0],
                 lt.backward_s[0]});
  for (int l = 0; l < g.n_layer; ++l) {
    const size_t i = static_cast<size_t>(l) + 1;
    out.push_back({"h." + std::to_string(l), static_cast<double>(table.layer_range(l).size()),
                   tokens * (6.0 * 12.0 * C * C + 12.0 * C * T), lt.forward_s[i], lt.backward_s[i]});
  }
  out.push_back({"ln_f+lm_head+loss", static_cast<double>(table.layer_range(g.n_layer).size()), tokens * 6.0 * V * C,
                 lt.forward_s.back(), lt.backward_s.back()});
  out.push_back({"gradient reduction wait", 0, 0, 0, lt.reduce_wait_s});
  out.push_back({"optimizer step", 0, 0, 0, optimizer_s});
  return out;
}

// "{'h.3': '1.23 M', ...}": the top k modules by key.
template <typename Key>
std::string top(std::vector<Module> mods, size_t k, Key key, const char* unit, bool seconds) {
  std::sort(mods.begin(), mods.end(), [&](const Module& a, const Module& b) { return key(a) > key(b); });
  std::string s = "{";
  for (size_t i = 0; i < std::min(k, mods.size()); ++i) {
    s += (i ? ", '" : "'") + mods[i].name + "': '" + (seconds ? ms(key(mods[i])) : si(key(mods[i]), unit)) + "'";
  }
  return s + "}";
}

// The top-k modules per depth (depth 0: the model; depth 1: its modules).
std::string aggregated(const Module& total, const std::vector<Module>& mods, const FlopsProfilerConfig& p) {
  std::string o;
  const size_t k = static_cast<size_t>(p.top_modules);
  o += "\n----------------------------- Aggregated Profile per rank -----------------------------\n";
  o += "Top " + std::to_string(k) + " modules in terms of params, FLOPs or latency at different model depths:\n";
  const std::vector<Module> depth0 = {total};
  for (int d = 0; d <= 1 && (p.module_depth < 0 || d <= p.module_depth); ++d) {
    const std::vector<Module>& at = d == 0 ? depth0 : mods;
    o += "depth " + std::to_string(d) + ":\n";
    o += "    params      - " + top(at, k, [](const Module& x) { return x.params; }, "", false) + "\n";
    o += "    FLOPs       - " + top(at, k, [](const Module& x) { return x.flops; }, "", false) + "\n";
    o += "    latency     - " + top(at, k, [](const Module& x) { return x.latency(); }, "", true) + "\n";
  }
  return o;
}

// One row per module, the model first.
std::string detailed(const Module& total, const std::vector<Module>& mods) {
  std::string o;
  char line[256];
  o += "\n------------------------------ Detailed Profile per rank ------------------------------\n";
  o += "(the gradient reduction wait and the optimizer step run after backward and are listed under bwd ms)\n";
  std::snprintf(line, sizeof(line), "%-26s%12s%9s%16s%9s%12s%12s%10s%14s\n", "module", "params", "%params",
                "fwd+bwd FLOPs", "%FLOPs", "fwd ms", "bwd ms", "%latency", "FLOP/s");
  o += line;
  std::vector<Module> rows = {total};
  rows.insert(rows.end(), mods.begin(), mods.end());
  for (const Module& x : rows) {
    const std::string name = (&x == &rows[0] ? "" : "  ") + x.name;
    std::snprintf(line, sizeof(line), "%-26s%12s%8.2f%%%16s%8.2f%%%12.2f%12.2f%9.2f%%%14s\n", name.c_str(),
                  si(x.params, "").c_str(), 100.0 * x.params / std::max(1.0, total.params), si(x.flops, "").c_str(),
                  100.0 * x.flops / std::max(1.0, total.flops), 1e3 * x.fwd_s, 1e3 * x.bwd_s,
                  100.0 * x.latency() / std::max(1e-12, total.latency()),
                  x.latency() > 0 && x.flops > 0 ? si(x.flops / x.latency(), "").c_str() : "-");
    o += line;
  }
  return o;
}

}  // namespace

std::string flops_profile(const ZtConfig& c, const Trainer& t, const StepMeasure& m) {
  const FlopsProfilerConfig& p = c.flops_profiler;
  const std::vector<Module> mods = modules(c, t, m.optimizer_s);
  Module total{"GPT2", 0, 0, 0, 0};
  for (const Module& x : mods) {
    total.params += x.params;
    total.flops += x.flops;
    total.fwd_s += x.fwd_s;
    total.bwd_s += x.bwd_s;
  }
  const double model_flops = c.model.flops_per_token(c.data.seq_len) * c.batch.micro_batch * c.data.seq_len *
                             static_cast<double>(c.batch.grad_accum);
  std::string o;
  char line[256];
  auto row = [&](const char* k, const std::string& v) {
    std::snprintf(line, sizeof(line), "%-62s%s\n", k, v.c_str());
    o += line;
  };
  o += "-------------------------- DeepSpeed Flops Profiler --------------------------\n";
  o += "Profile Summary at step " + std::to_string(m.step) + ":\n";
  o += "Notations: FLOPs count a multiply-add as 2; fwd+bwd FLOPs are the closed form MFU uses\n";
  row("world size:", std::to_string(m.world));
  row("data parallel size:", std::to_string(m.dp));
  row("model parallel size:", std::to_string(c.parallel.tp));
  row("batch size per rank:", std::to_string(c.batch.micro_batch * c.batch.grad_accum) + " (micro-batch " +
                                  std::to_string(c.batch.micro_batch) + " x accumulation " +
                                  std::to_string(c.batch.grad_accum) + ")");
  row("params per rank:", si(total.params, ""));
  row("fwd flops per rank:", si(model_flops / 3.0, ""));
  row("fwd+bwd flops per rank (model FLOPs, the MFU closed form):", si(model_flops, ""));
  row("fwd latency:", ms(total.fwd_s));
  row("bwd latency (with the gradient reduction wait):", ms(total.bwd_s - m.optimizer_s));
  row("optimizer step latency:", ms(m.optimizer_s));
  row("sum of module latencies:", ms(total.latency()));
  row("iter latency (measured step):", ms(m.step_s));
  row("fwd+bwd FLOPS per rank = model FLOPs / (fwd+bwd latency):",
      si(model_flops / std::max(1e-12, total.latency() - m.optimizer_s), "FLOPS"));
  if (m.peak_flops > 0) {
    std::snprintf(line, sizeof(line), "%.1f %%", 100.0 * model_flops / m.step_s / m.peak_flops);
    row("MFU (model FLOPs / iter latency / measured FMA peak):", line);
  }
  std::snprintf(line, sizeof(line), "%.2f", c.batch.micro_batch * c.batch.grad_accum / m.step_s);
  row("samples/second per rank:", line);
  std::snprintf(line, sizeof(line), "model FLOPs per step: %.0f; module FLOPs sum: %.0f\n", model_flops, total.flops);
  o += line;
  return o + aggregated(total, mods, p) + (p.detailed ? detailed(total, mods) : "");
}

Status log_profilers(const ZtConfig& c, Trainer& t, const ParallelGroups& g, const StepMeasure& m, int64_t print_every) {
  if (c.flops_profiler.enabled && m.step == c.flops_profiler.profile_step) {
    const std::string text = flops_profile(c, t, m);
    if (c.flops_profiler.output_file.empty()) {
      std::fputs(text.c_str(), stdout);
    } else {
      ZT_RETURN_IF_ERROR(write_file_atomic(c.flops_profiler.output_file, text));
      std::printf("flops profile of step %lld written to %s\n", static_cast<long long>(m.step),
                  c.flops_profiler.output_file.c_str());
    }
  }
  if (c.comms_logger.enabled && c.comms_logger.verbose && m.step % print_every == 0) {
    std::printf("communication after step %lld:\n%s", static_cast<long long>(m.step),
                comms_summary({g.world, g.dp, g.pp, g.tp, g.tied, &t.dp()}, c.comms_logger).c_str());
  }
  return Status::OK();
}

}  // namespace zt
