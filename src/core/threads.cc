// OpenMP and OpenBLAS thread counts (see threads.h).
#include "core/threads.h"

#include <cblas.h>
#include <dlfcn.h>
#include <omp.h>
#include <pthread.h>
#include <sched.h>

namespace zt {

namespace {

// True when the BLAS has a pool of its own, which is then held at one thread before any
// kernel runs. The pthreads build started that pool in its library constructor (a thread per
// CPU, spinning until its timeout): OpenBLAS's own blas_thread_shutdown_ (what its fork
// handler calls; looked up, as a build may lack it) ends those threads now; a call on one
// thread never needs them.
const bool kBlasHeld = [] {
  if (blas_shares_openmp()) return false;
  openblas_set_num_threads(1);
  if (void* f = dlsym(RTLD_DEFAULT, "blas_thread_shutdown_")) reinterpret_cast<int (*)()>(f)();
  return true;
}();

}  // namespace

BlasThreading blas_threading() {
  switch (openblas_get_parallel()) {
    case 0: return BlasThreading::kSequential;
    case 1: return BlasThreading::kPthreads;
    default: return BlasThreading::kOpenMp;
  }
}

const char* blas_threading_name(BlasThreading t) {
  switch (t) {
    case BlasThreading::kSequential: return "sequential";
    case BlasThreading::kPthreads: return "pthreads";
    case BlasThreading::kOpenMp: return "OpenMP";
  }
  return "?";
}

void set_num_threads(int threads) {
  omp_set_num_threads(threads);
  // A held BLAS is left alone: setting its count again would restart its pool.
  if (!kBlasHeld) openblas_set_num_threads(threads);
}

int num_threads() { return omp_get_max_threads(); }

int blas_threads() { return openblas_get_num_threads(); }

bool pin_threads(const std::vector<int>& cpus) {
  const int n = static_cast<int>(cpus.size());
  if (n == 0) return true;
  bool ok = true;
#pragma omp parallel num_threads(n) reduction(&& : ok)
  {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpus[static_cast<size_t>(omp_get_thread_num())], &set);
    ok = pthread_setaffinity_np(pthread_self(), sizeof(set), &set) == 0;
  }
  return ok;
}

void parallel_for(int64_t n, const std::function<void(int64_t)>& fn) {
#pragma omp parallel for schedule(dynamic)
  for (int64_t i = 0; i < n; ++i) fn(i);
}

}  // namespace zt
