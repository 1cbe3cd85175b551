// CpuTopology on a made-up sysfs tree (2 sockets x 2 cores x 2 SMT threads, a NUMA node per
// socket, in both of Linux's CPU numberings), Linux's CPU-list syntax, the placement order
// (cores socket by socket, SMT siblings last), the pinning rule's cases, and pin_threads on
// this machine (each OpenMP thread's affinity is its CPU afterwards; restored at the end).
#include "core/cpu_topology.h"

#include <gtest/gtest.h>
#include <omp.h>
#include <pthread.h>
#include <sched.h>

#include <filesystem>
#include <fstream>
#include <functional>

#include "core/threads.h"
#include "testing/temp_dir_test.h"

namespace zt {
namespace {

class CpuTopologyTest : public testing::TempDirTest {
 protected:
  // cpu c lies on socket socket(c), core core(c); a NUMA node per socket.
  void write_tree(int cpus, const std::function<int(int)>& socket, const std::function<int(int)>& core) {
    namespace fs = std::filesystem;
    fs::create_directories(fs::path(dir_) / "cpu");
    std::ofstream(fs::path(dir_) / "cpu" / "online") << "0-" << cpus - 1 << "\n";
    std::vector<std::string> node_list(2);
    for (int c = 0; c < cpus; ++c) {
      const fs::path topo = fs::path(dir_) / "cpu" / ("cpu" + std::to_string(c)) / "topology";
      fs::create_directories(topo);
      std::ofstream(topo / "physical_package_id") << socket(c) << "\n";
      std::ofstream(topo / "core_id") << core(c) << "\n";
      std::string& l = node_list[static_cast<size_t>(socket(c))];
      l += (l.empty() ? "" : ",") + std::to_string(c);
    }
    for (int n = 0; n < 2; ++n) {
      fs::create_directories(fs::path(dir_) / "node" / ("node" + std::to_string(n)));
      std::ofstream(fs::path(dir_) / "node" / ("node" + std::to_string(n)) / "cpulist") << node_list[static_cast<size_t>(n)] << "\n";
    }
  }
  static std::vector<int> range(int lo, int hi) {
    std::vector<int> v;
    for (int c = lo; c < hi; ++c) v.push_back(c);
    return v;
  }
};

TEST(CpuList, ParsesAndFormatsLinuxSyntax) {
  EXPECT_EQ(parse_cpu_list("0-3,8,10-11\n"), (std::vector<int>{0, 1, 2, 3, 8, 10, 11}));
  EXPECT_EQ(parse_cpu_list("5"), (std::vector<int>{5}));
  EXPECT_TRUE(parse_cpu_list("3-1").empty());
  EXPECT_TRUE(parse_cpu_list("x").empty());
  EXPECT_EQ(format_cpu_list({0, 1, 2, 3, 8, 10, 11}), "0-3,8,10-11");
}

TEST_F(CpuTopologyTest, SiblingsNumberedLastAsOnIntel) {  // cpu c and c + 4 share a core
  write_tree(8, [](int c) { return (c % 4) / 2; }, [](int c) { return c % 2; });
  const CpuTopology t = read_cpu_topology(dir_, range(0, 8));
  EXPECT_EQ(t.sockets(), 2);
  EXPECT_EQ(t.numa_nodes(), 2);
  EXPECT_EQ(t.cores(), 4);
  EXPECT_EQ(t.describe(), "2 sockets, 2 NUMA nodes, 4 cores, 8 CPUs (2 per core); this process may use 0-7 of 8 online");
  EXPECT_EQ(placement_order(t), (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
}

TEST_F(CpuTopologyTest, SiblingsAdjacentAndThePinningRule) {  // cpu 2k and 2k + 1 share a core
  write_tree(8, [](int c) { return c / 4; }, [](int c) { return (c % 4) / 2; });
  const CpuTopology all = read_cpu_topology(dir_, range(0, 8));
  EXPECT_EQ(placement_order(all), (std::vector<int>{0, 2, 4, 6, 1, 3, 5, 7}));
  EXPECT_TRUE(pin_plan(all, 2, 0, 0).cpus.empty());  // started by hand on the whole machine
  EXPECT_NE(pin_plan(all, 2, 0, 0).why.find("without mpirun or Slurm"), std::string::npos);
  EXPECT_EQ(pin_plan(all, 2, 1, 2).cpus, (std::vector<int>{4, 6}));  // rank 1 of 2: socket 1's cores
  EXPECT_EQ(pin_plan(all, 2, 1, 2).why, "pinned to CPUs 4,6");
  EXPECT_TRUE(pin_plan(all, 4, 0, 4).cpus.empty());  // 16 threads on 8 CPUs
  EXPECT_NE(pin_plan(all, 4, 0, 4).why.find("4 rank(s) x 4 threads on 8 CPUs"), std::string::npos);
  const CpuTopology bound = read_cpu_topology(dir_, {4, 5, 6});  // the launcher bound this rank
  EXPECT_EQ(bound.sockets(), 1);
  EXPECT_EQ(pin_plan(bound, 2, 3, 0).cpus, (std::vector<int>{4, 6}));  // its own mask: local rank unused
  EXPECT_TRUE(pin_plan(bound, 4, 0, 1).cpus.empty());
}

TEST(PinThreads, EachOpenMpThreadRunsOnItsCpu) {
  const CpuTopology t = cpu_topology();
  const int n = std::min(num_threads(), static_cast<int>(t.cpus.size()));
  std::vector<int> cpus(t.cpus.begin(), t.cpus.begin() + n);
  ASSERT_TRUE(pin_threads(cpus));
  std::vector<int> seen(static_cast<size_t>(n), -1);
#pragma omp parallel num_threads(n)
  {
    cpu_set_t set;
    CPU_ZERO(&set);
    pthread_getaffinity_np(pthread_self(), sizeof(set), &set);
    if (CPU_COUNT(&set) == 1) {
      for (int c : cpus) {
        if (CPU_ISSET(c, &set)) seen[static_cast<size_t>(omp_get_thread_num())] = c;
      }
    }
  }
  EXPECT_EQ(seen, cpus);
#pragma omp parallel num_threads(n)  // every thread back on the whole mask
  {
    cpu_set_t set;
    CPU_ZERO(&set);
    for (int c : t.cpus) CPU_SET(c, &set);
    pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
  }
}

}  // namespace
}  // namespace zt
