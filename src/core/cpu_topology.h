// CpuTopology: the sockets, NUMA nodes and physical cores of the CPUs this process may run
// on (its affinity mask), read from Linux's sysfs (devices/system/cpu/cpuN/topology and
// devices/system/node/nodeN/cpulist), and where a rank's compute threads should run.
//
// Pinning rule (pin_plan): a rank's threads are pinned one per CPU, in placement order
// (placement_order: every physical core of the first socket, then of the next, and SMT
// siblings only after all cores), when that cannot put two compute threads on one CPU:
//   - the rank's mask is its own (mpirun or Slurm bound it: the mask has fewer CPUs than the
//     machine) and holds at least `threads` CPUs: the first `threads` of the mask;
//   - the mask is the whole machine and the launcher says local_size ranks share it: rank
//     local_rank takes the local_rank-th run of `threads` CPUs, if local_size x threads
//     CPUs exist;
//   - otherwise nothing is pinned, and the reason says why: more threads than CPUs, or a
//     process started by hand (local_size 0: other processes may share the machine).
// Invariants: cpus is sorted and non-empty; socket_of, core_of and node_of have one entry
// per element of cpus (-1 where sysfs does not say).
// Thread-safety: plain values; reading sysfs has no shared state.
#pragma once

#include <string>
#include <vector>

namespace zt {

struct CpuTopology {
  std::vector<int> cpus;       // the affinity mask, sorted
  std::vector<int> socket_of;  // physical_package_id of each of cpus
  std::vector<int> core_of;    // core id, unique across sockets (socket * 65536 + core_id)
  std::vector<int> node_of;    // NUMA node
  int online_cpus = 0;         // CPUs of the whole machine (devices/system/cpu/online)
  int sockets() const;
  int numa_nodes() const;
  int cores() const;  // physical cores among cpus
  // "2 sockets, 2 NUMA nodes, 16 cores, 32 CPUs (2 per core); this process may use 0-31".
  std::string describe() const;
};

// "0-3,8,10-11" -> {0, 1, 2, 3, 8, 10, 11}; empty on a malformed list.
std::vector<int> parse_cpu_list(const std::string& list);
// "0-3,8,10-11" from a sorted list.
std::string format_cpu_list(const std::vector<int>& cpus);

// The topology of `cpus` as sysfs under `sysfs_root` (e.g. "/sys/devices/system") describes it.
CpuTopology read_cpu_topology(const std::string& sysfs_root, const std::vector<int>& cpus);
// This process's: its affinity mask under /sys/devices/system.
CpuTopology cpu_topology();

// cpus in placement order: physical cores socket by socket, then their SMT siblings.
std::vector<int> placement_order(const CpuTopology& t);

struct PinPlan {
  std::vector<int> cpus;  // one per thread, or empty: not pinned
  std::string why;        // what was decided, in words
};
PinPlan pin_plan(const CpuTopology& t, int threads, int local_rank, int local_size);

}  // namespace zt
