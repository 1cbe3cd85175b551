// OpenMP and OpenBLAS thread counts.
#include "core/threads.h"

#include <cblas.h>
#include <omp.h>

namespace zt {

void set_num_threads(int threads) {
  omp_set_num_threads(threads);
  openblas_set_num_threads(threads);
}

int num_threads() { return omp_get_max_threads(); }

void parallel_for(int64_t n, const std::function<void(int64_t)>& fn) {
#pragma omp parallel for schedule(dynamic)
  for (int64_t i = 0; i < n; ++i) fn(i);
}

}  // namespace zt
