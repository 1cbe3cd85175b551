// Shared by the MPI benchmarks (allreduce_bench, alltoall_bench): the median of repeated
// timings, and a repetition's time as the slowest rank's.
#pragma once

#include <mpi.h>

#include <algorithm>
#include <vector>

namespace zt::bench {

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

inline double slowest(double seconds) {
  double worst = 0.0;
  MPI_Allreduce(&seconds, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return worst;
}

}  // namespace zt::bench
