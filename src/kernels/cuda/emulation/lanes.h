// A CUDA grid emulated on the CPU, for testing the tile kernels where there is no GPU
// (ZT_CUDA_EMULATION; cuda_keywords.h maps the CUDA keywords onto this). Each block's
// threads run as cooperative contexts (ucontext) on the calling thread, one block after
// another: a thread runs until it reaches a barrier (__syncthreads, or the exchange of a
// warp-wide instruction), and then the next one of its warp runs; a warp runs as far as it
// goes before the next warp does. A block's shared memory is the
// kernels' function-static arrays (`__shared__` becomes `static`), which one block at a time
// owns. Warp-wide instructions (warp_ops.h) post their lane's operands to the warp's slots,
// wait for the warp, and compute the lane's result from every lane's operands as the PTX ISA
// defines it.
// A warp-wide read (ldmatrix) completes lane by lane after the warp's barrier, where a GPU's is
// one instant: a kernel that writes what its own warp just read, without a barrier between,
// would read its own writes here (none of zerotrain's does; block-shared tiles are refilled
// only after a __syncthreads).
// Invariants: one grid at a time, on one thread; every thread of a block reaches each
// barrier its block or warp reaches (a kernel whose threads part at a barrier stops the
// process, naming the kernel's block, as it would hang a GPU).
// Thread-safety: not thread-safe; run emulated grids from one thread.
#pragma once

#include <vector_types.h>

#include <cstdint>
#include <cstring>
#include <functional>

namespace zt::emu {

constexpr int kSlotWords = 8;  // 64-bit words a lane may post at one exchange

// The calling thread's indices and the grid's shape (threadIdx, blockIdx, blockDim, gridDim).
const uint3& thread_idx();
const uint3& block_idx();
const dim3& block_dim();
const dim3& grid_dim();
// The calling thread's lane in its warp (its linear index in the block, modulo 32).
int lane_id();

// __syncthreads(): waits until every thread of the block has arrived.
void sync_block();
// Waits until every thread of the calling thread's warp has arrived.
void sync_warp();
// Posts n <= kSlotWords words as this lane's slot and waits for the warp; returns the warp's
// slots, lane l's at [l * kSlotWords], valid until this lane's next exchange. (Exchanges
// alternate between two sets of slots: no lane can post into a set again before every lane
// has passed the next exchange's barrier, so after it has read this one.)
const uint64_t* post_and_wait(const uint64_t* words, int n);

// cp.async (async_copy.cuh under emulation), as strict as the hardware allows: an issued copy
// fills its destination with 0xff bytes (a NaN in every float format) at once and lands only
// when a wait lets it, so a thread that reads a tile before its group was committed and waited
// for, or a buffer another thread's copy is still filling, computes with NaNs.
// This thread's copy of `bytes` from `from` to `to` (zeros when !valid).
void issue_copy(void* to, const void* from, int bytes, bool valid);
// cp.async.commit_group: this thread's copies issued since the last commit become a group.
void commit_copies();
// cp.async.wait_group n: all but this thread's n most recently committed groups land.
void wait_copies(int n);

// Runs body once per thread of every block of grid, blocks in x, y, z order.
void run_grid(dim3 grid, dim3 block, const std::function<void()>& body);

// __shfl_xor_sync over the whole warp: lane l's v from lane l ^ mask.
template <class T>
T shfl_xor(T v, int mask) {
  static_assert(sizeof(T) <= sizeof(uint64_t));
  uint64_t mine = 0;
  std::memcpy(&mine, &v, sizeof(T));
  const uint64_t* all = post_and_wait(&mine, 1);
  T out;
  std::memcpy(&out, &all[(lane_id() ^ mask) * kSlotWords], sizeof(T));
  return out;
}

// kernel<<<grid, block, 0, stream>>>(args...) (launch.h's ZT_LAUNCH under emulation); the
// stream is ignored: an emulated grid runs to its end before launcher's call returns.
template <class K>
struct Launcher {
  dim3 grid, block;
  K kernel;
  template <class... A>
  void operator()(A... args) const {
    run_grid(grid, block, [&] { kernel(args...); });
  }
};
template <class K>
Launcher<K> launcher(dim3 grid, dim3 block, const void* /*stream*/, K kernel) {
  return {grid, block, kernel};
}

}  // namespace zt::emu
