// Rows staged in shared memory, for the norms' input-gradient kernels (norms.cu). A block
// owns `rows` consecutive rows (contiguous in global memory) and first copies each
// operand's rows into shared memory by asynchronous 16-byte copies (async_copy.cuh), every
// operand's in flight at once. The lane-ordered walks that follow (lane_order.cuh) then
// read shared memory instead of waiting on global memory one element at a time, and the
// second pass reuses the copy rather than reading the operands from DRAM again. Staging
// moves bytes only: every value is the one in global memory, so the arithmetic and its
// bits are the unstaged kernel's.
// Where one warp's rows of every operand do not fit the budget (rows of more than 12,288
// 16-bit or 6,144 fp32 elements at 16 lanes), the plan stages nothing and the same kernel
// reads global memory directly.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <mutex>
#include <unordered_map>

#include "kernels/cuda/async_copy.cuh"
#include "kernels/cuda/launch.h"
#include "kernels/cuda/pack.cuh"

namespace zt::cuda {

// Shared memory a block may stage: two blocks fit an SM of an A100, H100 or H200.
constexpr int kStageBytes = 96 * 1024;

struct StagePlan {
  int rows = 0;        // rows per block: a multiple of 32 / W, at most 256 / W
  size_t smem = 0;     // dynamic shared memory per block (0: unstaged)
  bool staged = false;
};

// Each staged operand's bytes in shared memory: its rows, rounded up to 16 bytes so the
// next operand starts aligned.
__host__ __device__ inline int64_t stage_stride_bytes(int rows, int C, int bytes) {
  return (int64_t{rows} * C * bytes + 15) / 16 * 16;
}

// The plan for rows of C elements of `bytes` each, W lanes a row, `arrays` staged operands.
inline StagePlan stage_plan(int W, int C, int bytes, int arrays) {
  const int warp_rows = 32 / W, max_rows = 256 / W;
  int64_t fit = (kStageBytes - 16 * arrays) / (int64_t{C} * bytes * arrays);
  fit -= fit % warp_rows;
  if (fit < warp_rows) return StagePlan{max_rows, 0, false};
  const int rows = static_cast<int>(fit < max_rows ? fit : max_rows);
  return StagePlan{rows, static_cast<size_t>(arrays * stage_stride_bytes(rows, C, bytes)), true};
}

// The block starts copying n elements from src (global) to dst (shared): 16-byte
// asynchronous copies where both ends are 16-byte aligned (the remainder element by
// element), else element by element. block_rows waits for them.
template <class T>
__device__ void stage_copy(T* dst, const T* src, int n) {
  int done = 0;
  if (aligned16(dst) && aligned16(src)) {
    constexpr int kPer = 16 / static_cast<int>(sizeof(T));
    const int nv = n / kPer;
    for (int v = threadIdx.x; v < nv; v += blockDim.x) copy16_async(dst + v * kPer, src + v * kPer);
    done = nv * kPer;
  }
  for (int e = done + static_cast<int>(threadIdx.x); e < n; e += blockDim.x) dst[e] = src[e];
}

// The block's rows of each operand src[k] (offset and n elements into it; the block has
// `rows` rows of C): a copy in shared memory when kStaged (operand k at k of the plan's
// strides), else src itself.
template <bool kStaged, class T, int K>
__device__ void block_rows(const T* (&out)[K], const T* const (&src)[K], int64_t offset, int n, int rows, int C) {
  extern __shared__ uint4 stage_smem[];
  const int64_t stride = stage_stride_bytes(rows, C, sizeof(T)) / static_cast<int64_t>(sizeof(T));
  for (int k = 0; k < K; ++k) {
    if constexpr (kStaged) {
      T* dst = reinterpret_cast<T*>(stage_smem) + k * stride;
      stage_copy(dst, src[k] + offset, n);
      out[k] = dst;
    } else {
      out[k] = src[k] + offset;
    }
  }
  if constexpr (kStaged) {
    commit_loads();
    wait_loads<0>();
    __syncthreads();
  }
}

// out[e] = H::store(f(r, c, e)) for the block's n elements (row r of C columns, column c),
// 16-byte stores where out is aligned. f(e) may read out[e] first: each element is read
// and written by one thread.
template <class H, class F>
__device__ void block_store(typename H::T* out, int n, int C, F f) {
  constexpr int P = kPack<H>;
  const int np = aligned16(out) ? n / P : 0;
  for (int p = threadIdx.x; p < np; p += blockDim.x) {
    float v[P];
    int e = p * P, r = e / C, c = e - r * C;
#pragma unroll
    for (int k = 0; k < P; ++k, ++e) {
      v[k] = f(r, c, e);
      if (++c == C) c = 0, ++r;
    }
    store_pack<H>(out + p * P, v);
  }
  for (int e = np * P + threadIdx.x; e < n; e += blockDim.x) out[e] = H::store(f(e / C, e % C, e));
}

// Lets `kernel` take `smem` bytes of dynamic shared memory, asking the driver only when
// the kernel's allowance grows (the launches below run every step).
inline void allow_smem(const void* kernel, size_t smem) {
  static std::mutex mu;
  static std::unordered_map<const void*, size_t> allowed;
  std::lock_guard<std::mutex> lock(mu);
  size_t& a = allowed[kernel];
  if (smem <= a) return;
  cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem));
  a = smem;
}

// Launches kernel over N rows by the plan: rows * W threads a block, the staged variant
// with the plan's shared memory (opted in above 48 KiB), else the direct one.
template <class... P, class... A>
void launch_rows(const char* name, void (*staged)(P...), void (*direct)(P...), StagePlan plan, int W, int64_t N,
                 cudaStream_t stream, A... args) {
  const unsigned blocks = static_cast<unsigned>((N + plan.rows - 1) / plan.rows);
  if (plan.staged) {
    if (plan.smem > 48 * 1024) allow_smem(reinterpret_cast<const void*>(staged), plan.smem);
    staged<<<blocks, plan.rows * W, plan.smem, stream>>>(args...);
  } else {
    direct<<<blocks, plan.rows * W, 0, stream>>>(args...);
  }
  check_launch(name);
}

}  // namespace zt::cuda
