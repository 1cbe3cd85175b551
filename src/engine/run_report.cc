// Per-rank figures gathered with one all-reduce of a rank-indexed table.
#include "engine/run_report.h"

#include "core/memory_stats.h"
#include "engine/rank_sync.h"
#include <cstdio>
#include <vector>

namespace zt {

namespace {

enum Field { kParams, kGrads, kOptim, kBuckets, kActs, kRss, kBusy, kExposed, kSwapBuf, kDisk, kRead, kWritten, kHpz, kFirstBytes };
constexpr int kFields = kFirstBytes + kNumCommOps;

// This rank's row of the table.
void fill_row(Trainer& trainer, double* row) {
  const MemoryReport m = trainer.memory();
  CommStats cs = trainer.dp().stats();
  if (const ProcessGroup* sp = trainer.sp_group()) {  // sequence parallelism's all-to-alls
    const CommStats x = sp->stats();
    for (int k = 0; k < kNumCommOps; ++k) cs.ops[k].logical_bytes += x.ops[k].logical_bytes;
    cs.busy_seconds += x.busy_seconds;
    cs.exposed_seconds += x.exposed_seconds;
  }
  row[kParams] = static_cast<double>(m.param_bytes);
  row[kGrads] = static_cast<double>(m.grad_bytes);
  row[kOptim] = static_cast<double>(m.optimizer_bytes);
  row[kBuckets] = static_cast<double>(m.bucket_bytes);
  row[kActs] = static_cast<double>(m.activation_bytes);
  row[kRss] = static_cast<double>(m.peak_rss_bytes);
  row[kBusy] = cs.busy_seconds;
  row[kExposed] = cs.exposed_seconds;
  row[kSwapBuf] = static_cast<double>(m.offload_buffer_bytes);
  row[kDisk] = static_cast<double>(m.disk_bytes);
  row[kRead] = static_cast<double>(m.disk_read_bytes);
  row[kWritten] = static_cast<double>(m.disk_written_bytes);
  // ZeRO++ hpZ: the backward's gathers within the secondary group (one host's ranks), apart
  // from the dp group's bytes, which cross hosts.
  row[kHpz] = trainer.hpz_group() != nullptr ? static_cast<double>(trainer.hpz_group()->stats().total_logical_bytes()) : 0.0;
  for (int k = 0; k < kNumCommOps; ++k) row[kFirstBytes + k] = static_cast<double>(cs.ops[k].logical_bytes);
}

Json ranks_json(const std::vector<double>& table, int N) {
  Json ranks = Json::array();
  for (int r = 0; r < N; ++r) {
    const double* v = table.data() + static_cast<size_t>(r) * kFields;
    Json comm = Json::object();
    for (int k = 0; k < kNumCommOps; ++k) {
      if (v[kFirstBytes + k] > 0) comm[comm_op_name(static_cast<CommOp>(k))] = v[kFirstBytes + k];
    }
    ranks.push_back({{"rank", r}, {"param_bytes", v[kParams]}, {"grad_bytes", v[kGrads]}, {"optimizer_bytes", v[kOptim]},
                     {"bucket_bytes", v[kBuckets]}, {"activation_bytes", v[kActs]}, {"peak_rss_bytes", v[kRss]},
                     {"disk_bytes", v[kDisk]}, {"comm_seconds", v[kBusy]}, {"exposed_comm_seconds", v[kExposed]},
                     {"comm_logical_bytes", comm}, {"hpz_comm_logical_bytes", v[kHpz]}});
  }
  return ranks;
}

// The memory table, the offload lines (NVMe: every rank offloads, or none).
std::string memory_lines(const std::vector<double>& table, int N) {
  std::string out = "memory per rank:  parameters  gradients  optimizer    buckets activations  peak RSS\n";
  char line[256];
  for (int r = 0; r < N; ++r) {
    const double* v = table.data() + static_cast<size_t>(r) * kFields;
    std::snprintf(line, sizeof(line), "  rank %-3d       %11s %10s %10s %10s %11s %9s\n", r,
                  format_bytes(v[kParams]).c_str(), format_bytes(v[kGrads]).c_str(), format_bytes(v[kOptim]).c_str(),
                  format_bytes(v[kBuckets]).c_str(), format_bytes(v[kActs]).c_str(), format_bytes(v[kRss]).c_str());
    out += line;
  }
  if (table[kDisk] <= 0) return out;
  out += "offload per rank (NVMe): on disk, swap buffers in memory, and what the last step moved:\n";
  for (int r = 0; r < N; ++r) {
    const double* v = table.data() + static_cast<size_t>(r) * kFields;
    std::snprintf(line, sizeof(line), "  rank %-3d        on disk %s, buffers %s; last step read %s, wrote %s\n", r,
                  format_bytes(v[kDisk]).c_str(), format_bytes(v[kSwapBuf]).c_str(), format_bytes(v[kRead]).c_str(),
                  format_bytes(v[kWritten]).c_str());
    out += line;
  }
  return out;
}

std::string comm_lines(const std::vector<double>& table, int N) {
  std::string out = "communication per rank (logical bytes as the ZeRO paper counts; time in flight, hidden = overlapped):\n";
  char line[256];
  for (int r = 0; r < N; ++r) {
    const double* v = table.data() + static_cast<size_t>(r) * kFields;
    std::string kinds;
    for (int k = 0; k < kNumCommOps; ++k) {
      if (v[kFirstBytes + k] <= 0) continue;
      kinds += std::string(" ") + comm_op_name(static_cast<CommOp>(k)) + " " + format_bytes(v[kFirstBytes + k]);
    }
    const double hidden = v[kBusy] > 0 ? (v[kBusy] - v[kExposed]) / v[kBusy] : 0.0;
    std::snprintf(line, sizeof(line), "  rank %-3d %s | %.2f s in flight, %.0f%% hidden\n", r, kinds.c_str(), v[kBusy],
                  100.0 * (hidden < 0 ? 0.0 : hidden));
    out += line;
  }
  return out;
}

}  // namespace

StatusOr<std::string> collect_run_report(Trainer& trainer, ProcessGroup& g, Json* ranks) {
  const int N = g.size(), rank = g.rank();
  std::vector<double> row(kFields, 0.0);
  fill_row(trainer, row.data());
  ZT_ASSIGN_OR_RETURN(const std::vector<double> table, rows_of_ranks(&g, row));
  if (rank != 0) return std::string();
  if (ranks != nullptr) *ranks = ranks_json(table, N);
  return N == 1 ? memory_lines(table, N) : memory_lines(table, N) + comm_lines(table, N);
}

}  // namespace zt
