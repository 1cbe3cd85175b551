// Gathering, summarising and rendering the parameter-server report; see ps_report.h.
#include "parallel/param_server/ps_report.h"

#include <algorithm>
#include <cstdio>
#include <type_traits>

#include "io/json_strict.h"

namespace zt {

namespace {

// Every numeric field of a report, in a fixed order (the gathered table's columns).
template <typename R, typename F>
void visit_fields(R& r, F&& f) {
  f(r.is_server), f(r.index), f(r.world_rank);
  auto& s = r.server;
  f(s.updates), f(s.pushes), f(s.serve_s), f(s.apply_s), f(s.push_bytes), f(s.pull_bytes);
  for (StalenessHistogram* h : {&s.staleness, &s.missed}) {
    for (auto& c : h->counts) f(c);
    f(h->max), f(h->total), f(h->sum);
  }
  auto& w = r.worker;
  f(w.units), f(w.tokens), f(w.wall_s), f(w.compute_s), f(w.pull_wait_s), f(w.slow_s), f(w.push_bytes),
      f(w.pull_bytes);
  f(r.sends), f(r.recvs), f(r.send_s), f(r.recv_s), f(r.val_loss);
}

size_t num_fields() {
  PsRankReport r;
  size_t n = 0;
  visit_fields(r, [&](auto&) { ++n; });
  return n;
}

void merge(StalenessHistogram* into, const StalenessHistogram& h) {
  for (size_t i = 0; i < h.counts.size(); ++i) into->counts[i] += h.counts[i];
  into->max = std::max(into->max, h.max);
  into->total += h.total;
  into->sum += h.sum;
}

std::string histogram_text(const StalenessHistogram& h) {
  std::string out;
  char buf[48];
  for (size_t i = 0; i < h.counts.size(); ++i) {
    if (h.counts[i] == 0) continue;
    std::snprintf(buf, sizeof(buf), "%s%zu%s:%lld", out.empty() ? "" : " ", i,
                  i + 1 == h.counts.size() ? "+" : "", static_cast<long long>(h.counts[i]));
    out += buf;
  }
  std::snprintf(buf, sizeof(buf), " (max %lld, mean %.2f)", static_cast<long long>(h.max), h.mean());
  return (out.empty() ? std::string("none") : out) + buf;
}

}  // namespace

void add_comm_stats(const CommStats& stats, PsRankReport* r) {
  r->sends = stats.of(CommOp::kSend).calls;
  r->send_s = stats.of(CommOp::kSend).seconds;
  r->recvs = stats.of(CommOp::kRecv).calls;
  r->recv_s = stats.of(CommOp::kRecv).seconds;
}

StatusOr<std::vector<PsRankReport>> gather_ps_reports(ProcessGroup& world, const PsRankReport& mine) {
  const size_t K = num_fields(), N = static_cast<size_t>(world.size());
  std::vector<double> table(K * N, 0.0);
  PsRankReport copy = mine;
  size_t i = static_cast<size_t>(world.rank()) * K;
  visit_fields(copy, [&](auto& v) { table[i++] = static_cast<double>(v); });
  ZT_RETURN_IF_ERROR(world.all_reduce(table.data(), table.size(), CommDType::kF64)->wait());
  std::vector<PsRankReport> out(N);
  for (size_t r = 0; r < N; ++r) {
    size_t j = r * K;
    visit_fields(out[r], [&](auto& v) { v = static_cast<std::remove_reference_t<decltype(v)>>(table[j++]); });
  }
  return out;
}

PsSummary summarize_ps(const std::vector<PsRankReport>& reports, const PsOptions& options) {
  PsSummary s;
  const PsMode mode = options.effective_mode();
  s.mode = ps_mode_name(mode);
  s.staleness_bound = mode == PsMode::kSync ? 0 : mode == PsMode::kBounded ? options.staleness : -1;
  int64_t sends = 0, recvs = 0, units = 0;
  double send_s = 0.0, recv_s = 0.0, wait_s = 0.0, apply_ms = 0.0;
  for (const PsRankReport& r : reports) {
    if (r.is_server) {
      s.servers += 1;
      s.server_updates_per_s.push_back(r.server.serve_s > 0 ? r.server.updates / r.server.serve_s : 0.0);
      apply_ms += r.server.updates > 0 ? 1e3 * r.server.apply_s / static_cast<double>(r.server.updates) : 0.0;
      merge(&s.staleness, r.server.staleness);
      merge(&s.missed, r.server.missed);
      continue;
    }
    s.workers += 1;
    s.tokens += r.worker.tokens;
    s.seconds = std::max(s.seconds, r.worker.wall_s);
    s.worker_units.push_back(r.worker.units);
    s.worker_tokens_per_s.push_back(r.worker.wall_s > 0 ? r.worker.tokens / r.worker.wall_s : 0.0);
    s.push_bytes += r.worker.push_bytes;
    s.pull_bytes += r.worker.pull_bytes;
    sends += r.sends, recvs += r.recvs, send_s += r.send_s, recv_s += r.recv_s;
    wait_s += r.worker.pull_wait_s;
    units += r.worker.units;
    if (!std::isnan(r.val_loss)) s.val_loss = r.val_loss;
  }
  s.tokens_per_s = s.seconds > 0 ? s.tokens / s.seconds : 0.0;
  s.apply_ms = s.servers > 0 ? apply_ms / s.servers : 0.0;
  s.step_ms = units > 0 ? 1e3 * s.seconds * s.workers / static_cast<double>(units) : 0.0;
  s.push_ms = sends > 0 ? 1e3 * send_s / static_cast<double>(sends) : 0.0;
  s.pull_ms = recvs > 0 ? 1e3 * recv_s / static_cast<double>(recvs) : 0.0;
  s.pull_wait_ms_per_step = units > 0 ? 1e3 * wait_s / static_cast<double>(units) : 0.0;
  return s;
}

std::string format_ps_report(const std::vector<PsRankReport>& reports, const PsSummary& s) {
  std::string out;
  char line[256];
  std::snprintf(line, sizeof(line),
                "parameter server: mode %s%s, %d server(s), %d worker(s); %lld tokens in %.2f s = %.0f tokens/s, "
                "%.1f ms per global step\n",
                s.mode.c_str(),
                s.staleness_bound > 0 ? (" (staleness bound " + std::to_string(s.staleness_bound) + ")").c_str() : "",
                s.servers, s.workers, static_cast<long long>(s.tokens), s.seconds, s.tokens_per_s, s.step_ms);
  out += line;
  out += "  role       rank  steps  tokens/s  updates/s  push MB  pull MB  push ms/msg  pull ms/msg  pull wait ms/step\n";
  for (const PsRankReport& r : reports) {
    if (r.is_server) {
      const PsServerStats& v = r.server;
      // A server's receives are posted ahead of the workers' steps, so their duration is
      // mostly the workers' compute: only its replies' latency is shown.
      std::snprintf(line, sizeof(line), "  server %-3lld %5lld  %5lld  %8s  %9.1f  %7.2f  %7.2f  %11s  %11.3f\n",
                    static_cast<long long>(r.index), static_cast<long long>(r.world_rank),
                    static_cast<long long>(v.updates), "", v.serve_s > 0 ? v.updates / v.serve_s : 0.0,
                    v.push_bytes / 1e6, v.pull_bytes / 1e6, "", r.sends ? 1e3 * r.send_s / r.sends : 0.0);
    } else {
      const PsWorkerStats& v = r.worker;
      std::snprintf(line, sizeof(line), "  worker %-3lld %5lld  %5lld  %8.0f  %9s  %7.2f  %7.2f  %11.3f  %11.3f  %17.2f\n",
                    static_cast<long long>(r.index), static_cast<long long>(r.world_rank),
                    static_cast<long long>(v.units), v.wall_s > 0 ? v.tokens / v.wall_s : 0.0, "",
                    v.push_bytes / 1e6, v.pull_bytes / 1e6, r.sends ? 1e3 * r.send_s / r.sends : 0.0,
                    r.recvs ? 1e3 * r.recv_s / r.recvs : 0.0, v.units ? 1e3 * v.pull_wait_s / v.units : 0.0);
    }
    out += line;
  }
  out += "  staleness (steps the pushing worker led the slowest, per applied push): " + histogram_text(s.staleness) +
         "\n";
  for (const PsRankReport& r : reports) {
    if (!r.is_server) continue;
    out += "    server " + std::to_string(r.index) + ": " + histogram_text(r.server.staleness) + "\n";
  }
  out += "  missed updates (applied between a worker's pull and its push): " + histogram_text(s.missed) + "\n";
  return out;
}

std::string ps_summary_json(const PsSummary& s) {
  Json hist = Json::array();
  for (int64_t c : s.staleness.counts) hist.push_back(c);
  Json j = {{"mode", s.mode},
            {"staleness_bound", s.staleness_bound},
            {"servers", s.servers},
            {"workers", s.workers},
            {"tokens", s.tokens},
            {"seconds", s.seconds},
            {"tokens_per_s", s.tokens_per_s},
            {"step_ms", s.step_ms},
            {"worker_units", s.worker_units},
            {"worker_tokens_per_s", s.worker_tokens_per_s},
            {"server_updates_per_s", s.server_updates_per_s},
            {"server_apply_ms_per_update", s.apply_ms},
            {"push_bytes", s.push_bytes},
            {"pull_bytes", s.pull_bytes},
            {"push_ms_per_msg", s.push_ms},
            {"pull_ms_per_msg", s.pull_ms},
            {"pull_wait_ms_per_step", s.pull_wait_ms_per_step},
            {"staleness_max", s.staleness.max},
            {"staleness_mean", s.staleness.mean()},
            {"staleness_hist", hist},
            {"applied_pushes", s.staleness.total},
            {"missed_updates_max", s.missed.max},
            {"missed_updates_mean", s.missed.mean()}};
  if (!std::isnan(s.val_loss)) j["val_loss"] = s.val_loss;
  return j.dump();
}

}  // namespace zt
