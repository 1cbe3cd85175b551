// Thread counts for everything that runs in parallel inside one rank: the OpenMP loops
// of the kernels and the BLAS's own threads. One setter keeps them equal.
// Thread-safety: call set_num_threads() from the main thread before kernels run.
#pragma once

#include <cstdint>
#include <functional>

namespace zt {

// Sets the thread count for OpenMP kernels and for the BLAS (threads >= 1).
void set_num_threads(int threads);
// The thread count OpenMP kernels use (omp_get_max_threads()).
int num_threads();

// Runs fn(i) for i in [0, n) on the kernel threads, items handed out one at a time
// (for coarse, uneven work such as initialising one tensor per item; kernels keep their
// own loops). fn must not throw.
void parallel_for(int64_t n, const std::function<void(int64_t)>& fn);

}  // namespace zt
