// Sockets, NUMA nodes and cores from sysfs, and the pinning rule (see cpu_topology.h).
#include "core/cpu_topology.h"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <set>
#include <tuple>

namespace zt {

namespace {

// The first line of a file, or "".
std::string first_line(const std::string& path) {
  std::ifstream f(path);
  std::string s;
  std::getline(f, s);
  return s;
}

int read_int(const std::string& path, int fallback) {
  const std::string s = first_line(path);
  if (s.empty()) return fallback;
  char* end = nullptr;
  const long v = std::strtol(s.c_str(), &end, 10);
  return end != s.c_str() ? static_cast<int>(v) : fallback;
}

std::vector<int> affinity_mask() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    for (int c = 0; c < CPU_SETSIZE; ++c) {
      if (CPU_ISSET(c, &set)) cpus.push_back(c);
    }
  }
  return cpus;
}

template <class T>
int distinct(const std::vector<T>& v) {
  return static_cast<int>(std::set<T>(v.begin(), v.end()).size());
}

}  // namespace

std::vector<int> parse_cpu_list(const std::string& list) {
  std::vector<int> out;
  size_t at = 0;
  while (at < list.size() && list[at] != '\n') {
    char* end = nullptr;
    const long lo = std::strtol(list.c_str() + at, &end, 10);
    if (end == list.c_str() + at || lo < 0) return {};
    long hi = lo;
    at = static_cast<size_t>(end - list.c_str());
    if (at < list.size() && list[at] == '-') {
      hi = std::strtol(list.c_str() + at + 1, &end, 10);
      if (end == list.c_str() + at + 1 || hi < lo) return {};
      at = static_cast<size_t>(end - list.c_str());
    }
    for (long c = lo; c <= hi; ++c) out.push_back(static_cast<int>(c));
    if (at < list.size() && list[at] == ',') ++at;
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::string format_cpu_list(const std::vector<int>& cpus) {
  std::string s;
  for (size_t i = 0; i < cpus.size();) {
    size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (!s.empty()) s += ",";
    s += std::to_string(cpus[i]) + (j > i ? "-" + std::to_string(cpus[j]) : "");
    i = j + 1;
  }
  return s;
}

CpuTopology read_cpu_topology(const std::string& sysfs_root, const std::vector<int>& cpus) {
  CpuTopology t;
  t.cpus = cpus;
  std::sort(t.cpus.begin(), t.cpus.end());
  t.online_cpus = static_cast<int>(parse_cpu_list(first_line(sysfs_root + "/cpu/online")).size());
  if (t.online_cpus == 0) t.online_cpus = static_cast<int>(t.cpus.size());
  std::vector<int> node_of_cpu;
  for (int n = 0; n < 4096; ++n) {
    const std::string list = first_line(sysfs_root + "/node/node" + std::to_string(n) + "/cpulist");
    if (list.empty() && access((sysfs_root + "/node/node" + std::to_string(n)).c_str(), F_OK) != 0) break;
    for (int c : parse_cpu_list(list)) {
      if (c >= static_cast<int>(node_of_cpu.size())) node_of_cpu.resize(static_cast<size_t>(c) + 1, -1);
      node_of_cpu[static_cast<size_t>(c)] = n;
    }
  }
  for (int c : t.cpus) {
    const std::string topo = sysfs_root + "/cpu/cpu" + std::to_string(c) + "/topology/";
    const int socket = read_int(topo + "physical_package_id", -1), core = read_int(topo + "core_id", c);
    t.socket_of.push_back(socket);
    t.core_of.push_back(std::max(socket, 0) * 65536 + core);
    t.node_of.push_back(c < static_cast<int>(node_of_cpu.size()) ? node_of_cpu[static_cast<size_t>(c)] : -1);
  }
  return t;
}

CpuTopology cpu_topology() {
  std::vector<int> mask = affinity_mask();
  if (mask.empty()) mask.push_back(0);
  return read_cpu_topology("/sys/devices/system", mask);
}

int CpuTopology::sockets() const { return std::max(1, distinct(socket_of)); }
int CpuTopology::numa_nodes() const { return std::max(1, distinct(node_of)); }
int CpuTopology::cores() const { return std::max(1, distinct(core_of)); }

std::string CpuTopology::describe() const {
  auto n = [](int v, const char* one, const char* many) { return std::to_string(v) + " " + (v == 1 ? one : many); };
  const int per_core = static_cast<int>(cpus.size()) / cores();
  return n(sockets(), "socket", "sockets") + ", " + n(numa_nodes(), "NUMA node", "NUMA nodes") + ", " +
         n(cores(), "core", "cores") + ", " + n(static_cast<int>(cpus.size()), "CPU", "CPUs") + " (" +
         std::to_string(per_core) + " per core); this process may use " + format_cpu_list(cpus) + " of " +
         std::to_string(online_cpus) + " online";
}

std::vector<int> placement_order(const CpuTopology& t) {
  std::vector<std::tuple<int, int, int, int>> key;  // (SMT rank within its core, socket, core, cpu)
  for (size_t i = 0; i < t.cpus.size(); ++i) {
    const int before = static_cast<int>(std::count(t.core_of.begin(), t.core_of.begin() + static_cast<long>(i), t.core_of[i]));
    key.emplace_back(before, t.socket_of[i], t.core_of[i], t.cpus[i]);
  }
  std::sort(key.begin(), key.end());
  std::vector<int> order;
  for (const auto& k : key) order.push_back(std::get<3>(k));
  return order;
}

PinPlan pin_plan(const CpuTopology& t, int threads, int local_rank, int local_size) {
  const int mask = static_cast<int>(t.cpus.size());
  const std::vector<int> order = placement_order(t);
  PinPlan p;
  int first = 0;
  if (mask < t.online_cpus) {  // bound by the launcher: the mask is this rank's own
    if (threads > mask) {
      p.why = "not pinned: " + std::to_string(threads) + " threads on the " + std::to_string(mask) + " CPUs this rank is bound to";
      return p;
    }
  } else if (local_size <= 0) {
    p.why = "not pinned: started without mpirun or Slurm, so other processes may share these CPUs";
    return p;
  } else if (static_cast<long>(local_size) * threads > mask) {
    p.why = "not pinned: " + std::to_string(local_size) + " rank(s) x " + std::to_string(threads) + " threads on " +
            std::to_string(mask) + " CPUs";
    return p;
  } else {
    first = local_rank * threads;
  }
  p.cpus.assign(order.begin() + first, order.begin() + first + threads);
  p.why = "pinned to CPU" + std::string(threads == 1 ? " " : "s ") + format_cpu_list([&] {
            std::vector<int> s = p.cpus;
            std::sort(s.begin(), s.end());
            return s;
          }());
  return p;
}

}  // namespace zt
