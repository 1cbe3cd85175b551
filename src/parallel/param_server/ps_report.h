// The end-of-job report of parameter-server training: every rank's figures gathered to
// every rank (one all-reduce over the world of a rank-by-field table), a summary
// (per-role throughput, push/pull bytes and mean latency per message, the staleness
// histogram over all servers) and its renderings: a table for people, one JSON object for
// tests and benchmarks. Latencies come from the communication layer's own timing of each
// message (issue to completion): a push's includes waiting for the server to take it, a
// pull's runs from posting the receive (right after the push) to the parameters' arrival,
// so it includes the server's update and, in synchronous and bounded modes, the wait for
// slower workers.
// Thread-safety: plain functions over values.
#pragma once

#include <cmath>
#include <string>
#include <vector>

#include "comm/process_group.h"
#include "core/status.h"
#include "parallel/param_server/ps_options.h"
#include "parallel/param_server/ps_stats.h"

namespace zt {

struct PsRankReport {
  int64_t is_server = 0;
  int64_t index = 0;  // server or worker index
  int64_t world_rank = 0;
  PsServerStats server;
  PsWorkerStats worker;
  int64_t sends = 0, recvs = 0;  // point-to-point messages of the job's group
  double send_s = 0.0, recv_s = 0.0;
  double val_loss = NAN;  // workers: validation loss of the final parameters (NaN: none)
};

// Fills the communication fields from the job group's statistics.
void add_comm_stats(const CommStats& stats, PsRankReport* report);

// Collective over `world` (size = servers + workers): every rank's report, by world rank.
StatusOr<std::vector<PsRankReport>> gather_ps_reports(ProcessGroup& world, const PsRankReport& mine);

struct PsSummary {
  std::string mode;
  int64_t staleness_bound = -1;  // bounded mode's bound; -1 unbounded (async); 0 sync
  int servers = 0, workers = 0;
  int64_t tokens = 0;            // all workers
  double seconds = 0.0;          // the slowest worker's first step to final parameters
  double tokens_per_s = 0.0;     // tokens / seconds: the job's throughput
  double step_ms = 0.0;          // seconds per global batch (W units)
  std::vector<int64_t> worker_units;
  std::vector<double> worker_tokens_per_s;
  std::vector<double> server_updates_per_s;
  double apply_ms = 0.0;  // per update, mean over servers: summing, norm, optimizer, sending
  int64_t push_bytes = 0, pull_bytes = 0;
  double push_ms = 0.0, pull_ms = 0.0;  // mean per message, workers' view
  double pull_wait_ms_per_step = 0.0;   // workers blocked on parameters, per step
  StalenessHistogram staleness;         // over all servers
  StalenessHistogram missed;
  double val_loss = NAN;
};

PsSummary summarize_ps(const std::vector<PsRankReport>& reports, const PsOptions& options);
// Tables for people: per-rank figures, then the staleness histograms.
std::string format_ps_report(const std::vector<PsRankReport>& reports, const PsSummary& summary);
// One line of JSON (no newline).
std::string ps_summary_json(const PsSummary& summary);

}  // namespace zt
