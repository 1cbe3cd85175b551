// allreduce_bench (run under mpirun -np 2, see bench/allreduce.sh): zerotrain's ring
// all_reduce through the ProcessGroup (CommAlgorithm::kRing, communication thread, polling
// back-off) against the library's own MPI_Allreduce called directly, in place, on
// MPI_COMM_WORLD, for float buffers of 1, 16, 64 and 256 MiB. The two alternate, several
// repetitions each (the warm-up's sums are checked); a repetition's time is the slowest
// rank's. Reports median bus bandwidth (busbw = 2(N-1)/N * bytes / time), the CPU the comm
// thread burns while waiting on a late peer, and, as the last line, one JSON object.
//   --chunk BYTES  --spin-us US  --max-sleep-us US  --sizes-mib 1,16,64,256  --reps R
#include <CLI/CLI.hpp>

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <thread>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "comm/mpi_world.h"
#include "core/timer.h"
#include "mpi_timing.h"

namespace zt {
namespace {

double process_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

// A power of two: sums over any number of ranks are exact, so results can be checked.
constexpr float kFill = 1.0f / 1024.0f;

bool all_equal(const std::vector<float>& v, float x) {
  return std::all_of(v.begin(), v.end(), [x](float y) { return y == x; });
}

using bench::median;
using bench::slowest;

int bench_main(int argc, char** argv) {
  CommOptions options;
  options.algorithm = CommAlgorithm::kRing;
  options.timeout_s = 120.0;
  std::vector<size_t> sizes_mib = {1, 16, 64, 256};
  int reps_override = 0;
  CLI::App app{"allreduce_bench: the ring against MPI_Allreduce"};
  app.add_option("--chunk", options.ring_chunk_bytes);
  app.add_option("--spin-us", options.poll_spin_us);
  app.add_option("--max-sleep-us", options.poll_max_sleep_us);
  app.add_option("--reps", reps_override);
  app.add_option("--sizes-mib", sizes_mib)->delimiter(',');
  CLI11_PARSE(app, argc, argv);
  auto init = MpiWorld::init(options);
  if (!init.ok()) {
    std::fprintf(stderr, "allreduce_bench: %s\n", init.status().to_string().c_str());
    return 1;
  }
  MpiWorld& world = *init.value();
  ProcessGroup& g = world.world();
  const int n = g.size(), rank = g.rank();
  const double bus_factor = n > 1 ? 2.0 * (n - 1) / n : 1.0;
  if (rank == 0) {
    std::printf("ranks %d, chunk %zu B, poll spin %.0f us, max sleep %.0f us\n", n, options.ring_chunk_bytes,
                options.poll_spin_us, options.poll_max_sleep_us);
    std::printf("%10s %6s %14s %14s %10s\n", "size", "reps", "ring GB/s", "MPI GB/s", "ring/MPI");
  }
  std::string json = "{\"bench\":\"allreduce\",\"ranks\":" + std::to_string(n) +
                     ",\"chunk_bytes\":" + std::to_string(options.ring_chunk_bytes);
  std::string per_size;
  for (size_t mib : sizes_mib) {
    const size_t bytes = mib << 20, count = bytes / sizeof(float);
    const int reps = reps_override > 0 ? reps_override : (mib <= 1 ? 30 : mib <= 16 ? 12 : mib <= 64 ? 8 : 5);
    std::vector<float> data(count, kFill);
    std::vector<double> ring_s, mpi_s;
    for (int rep = -1; rep < reps; ++rep) {  // rep -1 warms both up
      MPI_Barrier(MPI_COMM_WORLD);
      Stopwatch sw;
      Status s = g.all_reduce(data.data(), count, CommDType::kF32)->wait();
      const double tr = slowest(sw.seconds());
      if (!s.ok()) {
        std::fprintf(stderr, "allreduce_bench: %s\n", s.to_string().c_str());
        return 1;
      }
      if (rep < 0 && !all_equal(data, kFill * static_cast<float>(n))) {
        std::fprintf(stderr, "allreduce_bench: wrong ring sums at %zu MiB\n", mib);
        return 1;
      }
      std::fill(data.begin(), data.end(), kFill);
      MPI_Barrier(MPI_COMM_WORLD);
      sw.restart();
      MPI_Allreduce(MPI_IN_PLACE, data.data(), static_cast<int>(count), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
      const double tm = slowest(sw.seconds());
      if (rep >= 0) {
        ring_s.push_back(tr);
        mpi_s.push_back(tm);
      }
      if (rep < 0 && !all_equal(data, kFill * static_cast<float>(n))) {
        std::fprintf(stderr, "allreduce_bench: wrong sums at %zu MiB\n", mib);
        return 1;
      }
      std::fill(data.begin(), data.end(), kFill);  // keep values small (no overflow to inf)
    }
    const double ring_gbs = bus_factor * static_cast<double>(bytes) / median(ring_s) / 1e9;
    const double mpi_gbs = bus_factor * static_cast<double>(bytes) / median(mpi_s) / 1e9;
    if (rank == 0) {
      std::printf("%6zu MiB %6d %14.2f %14.2f %10.3f\n", mib, reps, ring_gbs, mpi_gbs, ring_gbs / mpi_gbs);
      std::fflush(stdout);
    }
    char buf[256];
    std::snprintf(buf, sizeof(buf), ",\"ring_vs_mpi_%zuMiB\":%.3f", mib, ring_gbs / mpi_gbs);
    json += buf;
    std::snprintf(buf, sizeof(buf), "%s\"%zuMiB\":{\"ring_busbw_gbs\":%.3f,\"mpi_busbw_gbs\":%.3f,\"ring_ms\":%.3f,\"mpi_ms\":%.3f}",
                  per_size.empty() ? "" : ",", mib, ring_gbs, mpi_gbs, median(ring_s) * 1e3, median(mpi_s) * 1e3);
    per_size += buf;
  }
  // CPU the communication thread burns while an operation waits on a late peer: rank 1
  // joins a one-float all_reduce 1 s late; rank 0's process CPU time over that second is
  // its comm thread's polling (the main thread is blocked in wait()).
  MPI_Barrier(MPI_COMM_WORLD);
  float one = 1.0f;
  double idle_cpu = 0.0;
  if (rank == 0) {
    const double cpu0 = process_cpu_seconds();
    Stopwatch sw;
    Status s = g.all_reduce(&one, 1, CommDType::kF32)->wait();
    idle_cpu = (process_cpu_seconds() - cpu0) / sw.seconds();
    if (!s.ok()) return 1;
  } else {
    std::this_thread::sleep_for(std::chrono::seconds(1));
    if (!g.all_reduce(&one, 1, CommDType::kF32)->wait().ok()) return 1;
  }
  if (rank == 0) {
    std::printf("comm thread CPU while waiting 1 s for a late peer: %.1f%% of a core\n", 100.0 * idle_cpu);
    std::printf("%s,\"sizes\":{%s},\"idle_wait_cpu_fraction\":%.4f}\n", json.c_str(), per_size.c_str(), idle_cpu);
  }
  return 0;
}

}  // namespace
}  // namespace zt

int main(int argc, char** argv) { return zt::bench_main(argc, argv); }
