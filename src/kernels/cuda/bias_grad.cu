// bias_grad (bias_grad.h): column_reduce.cuh's two passes over dout. Where every row of
// dout starts 16-byte aligned, the chunk pass reads it in 16-byte packs: a thread owns a
// pack's columns (8 for 16-bit storage) and sums each of them over its row lane in row
// order, as the generic pass does one column a thread, and the 8 lanes meet in the same
// tree, so both passes give the same bits (CudaGemm.BiasGradientGivesTheSameBitsPackedOrNot).
#include "kernels/cuda/bias_grad.h"

#include "kernels/cuda/column_reduce.cuh"
#include "kernels/cuda/half_bits.cuh"
#include "kernels/cuda/launch.h"
#include "kernels/cuda/pack.cuh"

namespace zt::cuda {

namespace {

template <class H>
struct BiasTerm {
  const typename H::T* dout;
  int C;
  __device__ void operator()(int64_t r, int c, float* t) const { t[0] = H::load(dout[r * C + c]); }
};

// Block (32 packs, 8 row lanes): 32 kPack columns; grid (column tiles, row chunks); partial
// is (chunks, C). REQUIRES: C % kPack == 0 and dout 16-byte aligned.
template <class H>
__global__ void packed_chunk_kernel(float* partial, const typename H::T* dout, int64_t N, int C) {
  constexpr int P = kPack<H>, W = 32 * P;
  __shared__ float sums[kColumnLanes][W];
  const int c0 = (blockIdx.x * 32 + threadIdx.x) * P;
  const int64_t r0 = static_cast<int64_t>(blockIdx.y) * kColumnChunkRows;
  float acc[P];
#pragma unroll
  for (int j = 0; j < P; ++j) acc[j] = 0.0f;
  if (c0 < C) {
    constexpr int kUnroll = 4;  // rows whose packs are in flight together
    const int64_t end = r0 + kColumnChunkRows < N ? r0 + kColumnChunkRows : N;
    for (int64_t r = r0 + threadIdx.y; r < end; r += kColumnLanes * kUnroll) {
      add_lane_rows<kUnroll>(acc, r, end, [&](int64_t row, float* t) { load_pack<H>(dout + row * C + c0, t); });
    }
  }
#pragma unroll
  for (int j = 0; j < P; ++j) sums[threadIdx.y][threadIdx.x * P + j] = acc[j];
  __syncthreads();
  for (int x = threadIdx.y * 32 + threadIdx.x; x < W; x += 32 * kColumnLanes) {  // one column a thread
    const int col = blockIdx.x * W + x;
    if (col < C) partial[static_cast<int64_t>(blockIdx.y) * C + col] = lane_tree<W>(sums, x);
  }
}

}  // namespace

int64_t bias_grad_workspace_floats(int64_t N, int OC) { return column_workspace_floats(1, N, OC); }

void bias_grad(DType t, float* dbias, const void* dout, int64_t N, int OC, float* workspace, cudaStream_t stream) {
  if (N <= 0 || OC <= 0) return;
  with_storage(t, [&](auto h) {
    using H = decltype(h);
    const auto* d = static_cast<const typename H::T*>(dout);
    if (OC % kPack<H> == 0 && aligned16(d)) {
      constexpr int W = 32 * kPack<H>;
      const dim3 block(32, kColumnLanes), grid(static_cast<unsigned>((OC + W - 1) / W), static_cast<unsigned>(column_chunks(N)));
      ZT_LAUNCH(grid, block, stream, packed_chunk_kernel<H>)(workspace, d, N, OC);
      column_combine<1>(ColumnTargets<1>{{dbias}}, workspace, N, OC, stream);
    } else {
      column_sums<1>(ColumnTargets<1>{{dbias}}, N, OC, BiasTerm<H>{d, OC}, workspace, stream);
    }
  });
  check_launch("bias_grad");
}

}  // namespace zt::cuda
