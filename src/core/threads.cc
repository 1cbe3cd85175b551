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

}  // namespace zt
