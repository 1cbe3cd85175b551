// Thread counts for everything that runs in parallel inside one rank: the OpenMP loops
// of the kernels and the BLAS's own threads. One setter keeps them equal.
// Thread-safety: call set_num_threads() from the main thread before kernels run.
#pragma once

namespace zt {

// Sets the thread count for OpenMP kernels and for the BLAS (threads >= 1).
void set_num_threads(int threads);
// The thread count OpenMP kernels use (omp_get_max_threads()).
int num_threads();

}  // namespace zt
