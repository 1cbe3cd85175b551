// Thread counts for everything that runs in parallel inside one rank: the OpenMP loops
// of the kernels and the BLAS's own threads, never more than the rank's thread count.
//
// OpenBLAS comes in three builds (openblas_get_parallel()): OpenMP, whose GEMMs run on the
// kernels' own OpenMP threads (and on the calling thread alone inside a parallel region);
// pthreads, with a pool of its own that OpenMP cannot see; and sequential. Only the OpenMP
// build may run several threads: the pthreads build is held at one thread from the moment
// the process starts (a static initializer here), because its pool would run beside the
// OpenMP threads, each side spinning while the other works (16 + 16 threads on 16 cores ran
// 8x slower, issue 32). The GEMM path then routes its GEMMs through oneDNN, which runs on
// the OpenMP threads (kernels/cpu/gemm_path.h).
// Thread-safety: call set_num_threads() from the main thread before kernels run.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

namespace zt {

// How the loaded OpenBLAS runs its threads.
enum class BlasThreading { kSequential, kPthreads, kOpenMp };
BlasThreading blas_threading();
const char* blas_threading_name(BlasThreading t);  // "sequential", "pthreads", "OpenMP"
// Whether the BLAS's threads are the kernels' OpenMP threads (so it may use several).
inline bool blas_shares_openmp() { return blas_threading() == BlasThreading::kOpenMp; }

// Sets the thread count for OpenMP kernels and, where it shares them, for the BLAS
// (threads >= 1); a BLAS with a pool of its own stays at one thread.
void set_num_threads(int threads);
// The thread count OpenMP kernels use (omp_get_max_threads()).
int num_threads();
// The threads the BLAS may run at once (openblas_get_num_threads()).
int blas_threads();

// Pins the kernels' OpenMP thread i to CPU cpus[i] (cpus.size() threads; libgomp keeps a
// team's threads from one parallel loop to the next). False where Linux refused.
bool pin_threads(const std::vector<int>& cpus);

// Runs fn(i) for i in [0, n) on the kernel threads, items handed out one at a time
// (for coarse, uneven work such as initialising one tensor per item; kernels keep their
// own loops). fn must not throw.
void parallel_for(int64_t n, const std::function<void(int64_t)>& fn);

}  // namespace zt
