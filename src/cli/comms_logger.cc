// The comms logger's summary table; see comms_logger.h.
#include "cli/comms_logger.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <tuple>

#include "comm/comm_engine.h"

namespace zt {

namespace {

double bus_factor(CommOp op, int n) {
  if (n <= 1) return 1.0;
  switch (op) {
    case CommOp::kAllReduce: return 2.0 * (n - 1) / n;
    case CommOp::kAllGather:
    case CommOp::kReduceScatter: return static_cast<double>(n - 1) / n;
    default: return 1.0;
  }
}

// DeepSpeed's size labels ("4.0 KB"), decimal as in comms_logging.py's convert_size.
std::string size_label(int64_t bytes) {
  const char* units[] = {"B", "KB", "MB", "GB", "TB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1000.0 && u < 4) {
    v /= 1000.0;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f %s", v, units[u]);
  return buf;
}

struct Row {
  int64_t calls = 0;
  double seconds = 0.0;
};

}  // namespace

std::string comms_summary(const std::vector<ProcessGroup*>& groups, const CommsLoggerConfig& config) {
  std::set<const ProcessGroup*> seen;  // by whose counters they are (a staged group reports its inner group's)
  std::map<std::tuple<int, int64_t, int>, Row> rows;  // (op, bytes, group size)
  int64_t logical = 0;
  for (ProcessGroup* g : groups) {
    if (g == nullptr || !seen.insert(g->stats_owner()).second) continue;
    const CommStats s = g->stats();
    for (const auto& [key, v] : s.by_size) {
      const char* name = comm_op_name(key.first);
      if (key.first == CommOp::kBarrier) continue;
      if (!config.prof_all && std::find(config.prof_ops.begin(), config.prof_ops.end(), name) == config.prof_ops.end()) {
        continue;
      }
      Row& r = rows[{static_cast<int>(key.first), key.second, g->size()}];
      r.calls += v.calls;
      r.seconds += v.seconds;
      logical += v.calls * logical_bytes_of(key.first, key.second);
    }
  }
  std::string out;
  char line[256];
  std::snprintf(line, sizeof(line), "%-20s%-20s%-20s%-20s%-20s%-20s%-20s\n", "Comm. Op", "Message Size", "Count",
                "Total Latency(ms)", "Avg Latency(ms)", "tput_avg (Gbps)", "busbw_avg (Gbps)");
  out += line;
  int last_op = -1;
  for (const auto& [key, r] : rows) {
    const auto [op, bytes, n] = key;
    if (op != last_op) out += std::string(comm_op_name(static_cast<CommOp>(op))) + "\n";
    last_op = op;
    const double avg_ms = r.calls > 0 ? 1e3 * r.seconds / static_cast<double>(r.calls) : 0.0;
    const double algbw = avg_ms > 0 ? static_cast<double>(bytes) * 8.0 / (avg_ms * 1e-3) / 1e9 : 0.0;
    std::snprintf(line, sizeof(line), "%-20s%-20s%-20lld%-20.2f%-20.2f%-20.2f%-20.2f\n", "", size_label(bytes).c_str(),
                  static_cast<long long>(r.calls), 1e3 * r.seconds, avg_ms, algbw,
                  algbw * bus_factor(static_cast<CommOp>(op), n));
    out += line;
  }
  std::snprintf(line, sizeof(line), "logical volume per rank (ZeRO paper's count): %lld bytes\n",
                static_cast<long long>(logical));
  return out + line;
}

}  // namespace zt
