// alltoall_bench (run under mpirun, see bench/alltoall.sh): MoE's token exchange (issue 30).
// zerotrain's own all-to-all (ProcessGroup::all_to_all over send/recv: a group with
// CommAlgorithm::kRing), the same call on a kMpi group (MPI_Ialltoallv through the
// communication thread), and the library's MPI_Alltoall called directly, for a per-rank
// payload of 1, 8 and 32 MiB split evenly over the ranks. The three alternate, several
// repetitions each (the warm-up's bytes are checked); a repetition's time is the slowest
// rank's. Reports median algorithm bandwidth (bytes sent per rank / time) and, last, one
// JSON object.
//   --sizes-mib 1,8,32  --reps R
#include <CLI/CLI.hpp>

#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "comm/mpi_world.h"
#include "core/timer.h"
#include "mpi_timing.h"

namespace zt {
namespace {

using bench::median;
using bench::slowest;

// Rank r's segment for rank q holds bytes (r * 7 + q * 13 + i) & 0xff.
void fill(std::vector<unsigned char>& send, int r, int n, size_t seg) {
  for (int q = 0; q < n; ++q) {
    for (size_t i = 0; i < seg; ++i) send[q * seg + i] = static_cast<unsigned char>((r * 7 + q * 13 + i) & 0xff);
  }
}

bool check(const std::vector<unsigned char>& recv, int r, int n, size_t seg) {
  for (int q = 0; q < n; ++q) {
    for (size_t i = 0; i < seg; ++i) {
      if (recv[q * seg + i] != static_cast<unsigned char>((q * 7 + r * 13 + i) & 0xff)) return false;
    }
  }
  return true;
}

// One timed repetition of each way; false when a warm-up result is wrong.
bool time_three(ProcessGroup& own, ProcessGroup& mpi, size_t seg, bool verify, double t[3]) {
  const int n = own.size(), r = own.rank();
  std::vector<unsigned char> send(seg * n), recv(seg * n);
  fill(send, r, n, seg);
  const std::vector<size_t> bytes(static_cast<size_t>(n), seg);
  ProcessGroup* groups[2] = {&own, &mpi};
  for (int k = 0; k < 3; ++k) {
    std::fill(recv.begin(), recv.end(), 0);
    MPI_Barrier(MPI_COMM_WORLD);
    Stopwatch sw;
    if (k < 2) {
      if (!groups[k]->all_to_all(send.data(), bytes, recv.data(), bytes)->wait().ok()) return false;
    } else {
      MPI_Alltoall(send.data(), static_cast<int>(seg), MPI_BYTE, recv.data(), static_cast<int>(seg), MPI_BYTE,
                   MPI_COMM_WORLD);
    }
    t[k] = slowest(sw.seconds());
    if (verify && !check(recv, r, n, seg)) return false;
  }
  return true;
}

int bench_main(int argc, char** argv) {
  std::vector<size_t> sizes_mib = {1, 8, 32};
  int reps = 10;
  CLI::App app{"alltoall_bench: zerotrain's all-to-all against MPI_Alltoall"};
  app.add_option("--sizes-mib", sizes_mib)->delimiter(',');
  app.add_option("--reps", reps);
  CLI11_PARSE(app, argc, argv);
  CommOptions own_opts, mpi_opts;
  own_opts.algorithm = CommAlgorithm::kRing;
  own_opts.timeout_s = mpi_opts.timeout_s = 120.0;
  auto init = MpiWorld::init(mpi_opts);
  if (!init.ok()) return std::fprintf(stderr, "alltoall_bench: %s\n", init.status().to_string().c_str()), 1;
  MpiWorld& world = *init.value();
  ProcessGroup& mpi = world.world();
  auto own = world.split(0, mpi.rank(), own_opts);
  if (!own.ok()) return std::fprintf(stderr, "alltoall_bench: %s\n", own.status().to_string().c_str()), 1;
  const int n = mpi.size();
  if (mpi.rank() == 0) std::printf("ranks %d\n%10s %6s %12s %12s %12s %10s\n", n, "per rank", "reps", "own GB/s",
                                   "group MPI", "MPI_Alltoall", "own/MPI");
  std::string json = "{\"bench\":\"alltoall\",\"ranks\":" + std::to_string(n);
  for (size_t mib : sizes_mib) {
    const size_t seg = (mib << 20) / static_cast<size_t>(n);
    std::vector<double> t[3];
    for (int rep = -1; rep < reps; ++rep) {
      double s[3];
      if (!time_three(*own.value(), mpi, seg, rep < 0, s)) return std::fprintf(stderr, "alltoall_bench: wrong bytes\n"), 1;
      for (int k = 0; rep >= 0 && k < 3; ++k) t[k].push_back(s[k]);
    }
    double gbs[3];
    for (int k = 0; k < 3; ++k) gbs[k] = static_cast<double>(seg * n) / median(t[k]) / 1e9;
    if (mpi.rank() == 0) std::printf("%6zu MiB %6d %12.2f %12.2f %12.2f %10.3f\n", mib, reps, gbs[0], gbs[1], gbs[2], gbs[0] / gbs[2]);
    char buf[200];
    std::snprintf(buf, sizeof(buf), ",\"own_vs_mpi_%zuMiB\":%.3f,\"group_mpi_vs_mpi_%zuMiB\":%.3f", mib, gbs[0] / gbs[2], mib,
                  gbs[1] / gbs[2]);
    json += buf;
  }
  if (mpi.rank() == 0) std::printf("%s}\n", json.c_str());
  return 0;
}

}  // namespace
}  // namespace zt

int main(int argc, char** argv) { return zt::bench_main(argc, argv); }
