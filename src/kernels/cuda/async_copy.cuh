// Asynchronous 16-byte copies from global to shared memory (cp.async.cg, sm_80 and later):
// a thread issues any number, commits them as a group and later waits for its groups, so
// every copy is in flight at once instead of one load's latency at a time. The copied
// bytes are the global ones; only the waiting changes. Callers barrier the block after
// waiting before another thread reads the copy.
// Invariants: both addresses 16-byte aligned.
#pragma once

#include <cstdint>

namespace zt::cuda {

// Copies 16 bytes from global `from` to shared `to`, or writes 16 zero bytes when !valid.
__device__ __forceinline__ void copy16_async(void* to, const void* from, bool valid = true) {
  const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(to));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(from), "r"(valid ? 16 : 0));
}

__device__ __forceinline__ void commit_loads() { asm volatile("cp.async.commit_group;\n" ::); }

// Waits until at most N of this thread's committed copy groups are still in flight.
template <int N>
__device__ __forceinline__ void wait_loads() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

}  // namespace zt::cuda
