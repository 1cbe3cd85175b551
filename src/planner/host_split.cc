// The splits of a host's cores and the mpirun binding of ranks to them (see host_split.h).
#include "planner/host_split.h"

#include "core/cpu_topology.h"

namespace zt {

namespace {

std::string count(int n, const char* one, const char* many) { return std::to_string(n) + " " + (n == 1 ? one : many); }

}  // namespace

std::string HostShape::describe() const {
  return count(sockets, "socket", "sockets") + ", " + count(cores, "core", "cores");
}

std::string HostSplit::describe() const {
  return count(ranks, "rank", "ranks") + " x " + count(threads, "thread", "threads");
}

HostShape this_host_shape() {
  const CpuTopology t = cpu_topology();
  HostShape h{t.sockets(), t.cores()};
  if (h.cores % h.sockets != 0 || h.cores < h.sockets) h.sockets = 1;  // an uneven mask: one pool of cores
  return h;
}

StatusOr<HostShape> host_shape(int sockets, int cores) {
  if (sockets < 1 || cores < sockets || cores % sockets != 0) {
    return Status::InvalidArgument("--sockets-per-host " + std::to_string(sockets) + " and --cores-per-host " +
                                   std::to_string(cores) + ": expected at least one socket and the cores a multiple "
                                   "of the sockets");
  }
  return HostShape{sockets, cores};
}

std::vector<HostSplit> host_splits(const HostShape& h) {
  std::vector<HostSplit> out;
  for (int r = 1; r <= h.cores; ++r) {
    if (h.cores % r != 0) continue;
    const int threads = h.cores / r;
    if (r == 1 || (r % h.sockets == 0 && h.cores_per_socket() % threads == 0)) out.push_back({r, threads});
  }
  return out;
}

StatusOr<std::vector<std::string>> mpirun_binding(const HostShape& h, int ranks_per_host, int threads,
                                                  bool same_ranks_every_host) {
  if (ranks_per_host < 1 || threads < 1) return Status::InvalidArgument("launch: ranks and threads must be at least 1");
  if (ranks_per_host * threads > h.cores) {
    return Status::InvalidArgument(HostSplit{ranks_per_host, threads}.describe() + " need " +
                                   std::to_string(ranks_per_host * threads) + " cores; the host has " + h.describe());
  }
  const int per_socket = ranks_per_host / h.sockets;
  const bool by_socket = same_ranks_every_host && h.sockets > 1 && ranks_per_host % h.sockets == 0 &&
                         per_socket * threads <= h.cores_per_socket();
  const std::string pe = ":PE=" + std::to_string(threads);
  return std::vector<std::string>{"--map-by", by_socket ? "ppr:" + std::to_string(per_socket) + ":socket" + pe : "slot" + pe,
                                  "--bind-to", "core"};
}

}  // namespace zt
