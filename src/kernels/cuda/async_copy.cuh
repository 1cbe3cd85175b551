// Asynchronous 16-byte and 4-byte copies from global to shared memory (cp.async, sm_80 and later):
// a thread issues any number, commits them as a group and later waits for its groups, so
// every copy is in flight at once instead of one load's latency at a time. The copied
// bytes are the global ones; only the waiting changes. Callers barrier the block after
// waiting before another thread reads the copy.
// Invariants: both addresses aligned to the copy's size.
// Built with ZT_CUDA_EMULATION (the CPU tests of emulation/), each copy happens at once and
// the waits are empty: the copied bytes are the same, only the overlap is gone.
#pragma once

#include <cstdint>

#ifdef ZT_CUDA_EMULATION
#include "kernels/cuda/emulation/async_copy.h"
#else

namespace zt::cuda {

// Copies 16 bytes from global `from` to shared `to`, or writes 16 zero bytes when !valid.
__device__ __forceinline__ void copy16_async(void* to, const void* from, bool valid = true) {
  const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(to));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(from), "r"(valid ? 16 : 0));
}

// Copies 4 bytes (one float) from global `from` to shared `to`, or writes 4 zero bytes when
// !valid (`from` must still be a mapped address). Goes through L1 (.ca: .cg takes 16 only).
__device__ __forceinline__ void copy4_async(void* to, const void* from, bool valid = true) {
  const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(to));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst), "l"(from), "r"(valid ? 4 : 0));
}

__device__ __forceinline__ void commit_loads() { asm volatile("cp.async.commit_group;\n" ::); }

// Waits until at most N of this thread's committed copy groups are still in flight.
template <int N>
__device__ __forceinline__ void wait_loads() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

}  // namespace zt::cuda

#endif  // ZT_CUDA_EMULATION
