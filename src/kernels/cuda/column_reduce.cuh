// Deterministic column sums of per-element terms over the rows of an (N, C) tensor, for
// every "parameter gradient += sum over rows" of zerotrain's CUDA kernels (bias, LayerNorm
// and RMSNorm weights): fixed 256-row chunks, each column of a chunk summed by 8 row lanes
// in row order and a fixed tree, then the chunks added in chunk order and the total added
// to the destination once. The order depends only on N and C.
// F is a functor: f(r, c, float t[K]) writes the K terms of row r, column c.
#pragma once

#include <cstdint>

#include "kernels/cuda/launch.h"
#include "kernels/cuda/vmath.cuh"

namespace zt::cuda {

constexpr int kColumnChunkRows = 256;
constexpr int kColumnLanes = 8;

inline int64_t column_chunks(int64_t N) { return (N + kColumnChunkRows - 1) / kColumnChunkRows; }
// Floats of workspace for K sums over (N, C).
inline int64_t column_workspace_floats(int K, int64_t N, int C) { return K * column_chunks(N) * C; }

// The fixed tree over the 8 row lanes' sums of column x, s[lane][x].
template <int W>
__device__ __forceinline__ float lane_tree(const float (*s)[W], int x) {
  return vadd(vadd(vadd(s[0][x], s[4][x]), vadd(s[2][x], s[6][x])), vadd(vadd(s[1][x], s[5][x]), vadd(s[3][x], s[7][x])));
}

// Adds the K terms of rows r, r + 8, ..., r + 8 (U - 1) (those before end) to acc in row
// order, after reading them all (load(row, t) writes a row's K terms; the U rows' loads are
// in flight together): the same sums as one row at a time.
template <int U, int K, class L>
__device__ __forceinline__ void add_lane_rows(float (&acc)[K], int64_t r, int64_t end, L&& load) {
  float t[U][K];
#pragma unroll
  for (int u = 0; u < U; ++u) {
    if (r + u * kColumnLanes < end) load(r + u * kColumnLanes, t[u]);
  }
#pragma unroll
  for (int u = 0; u < U; ++u) {
    if (r + u * kColumnLanes < end) {
#pragma unroll
      for (int k = 0; k < K; ++k) acc[k] = vadd(acc[k], t[u][k]);
    }
  }
}

// Block (32 columns, 8 row lanes), grid (column tiles, row chunks); partial is (K, chunks, C).
template <int K, class F>
__global__ void column_chunk_kernel(float* partial, int64_t N, int C, F f) {
  __shared__ float sums[K][kColumnLanes][32];
  const int col = blockIdx.x * 32 + threadIdx.x;
  const int64_t r0 = static_cast<int64_t>(blockIdx.y) * kColumnChunkRows;
  float acc[K];
#pragma unroll
  for (int k = 0; k < K; ++k) acc[k] = 0.0f;
  if (col < C) {
    constexpr int kUnroll = 8;
    const int64_t end = r0 + kColumnChunkRows < N ? r0 + kColumnChunkRows : N;
    for (int64_t r = r0 + threadIdx.y; r < end; r += kColumnLanes * kUnroll) {
      add_lane_rows<kUnroll>(acc, r, end, [&](int64_t row, float* t) { f(row, col, t); });
    }
  }
#pragma unroll
  for (int k = 0; k < K; ++k) sums[k][threadIdx.y][threadIdx.x] = acc[k];
  __syncthreads();
  if (threadIdx.y == 0 && col < C) {
    const int x = threadIdx.x;
    const int64_t chunks = gridDim.y;
#pragma unroll
    for (int k = 0; k < K; ++k) partial[(k * chunks + blockIdx.y) * C + col] = lane_tree<32>(sums[k], x);
  }
}

// dst[k][c] += the chunks' partial sums of column c, in chunk order.
template <int K>
struct ColumnTargets {
  float* dst[K];
};

template <int K>
__global__ void column_combine_kernel(ColumnTargets<K> out, const float* partial, int64_t chunks, int C) {
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (col >= C) return;
#pragma unroll
  for (int k = 0; k < K; ++k) {
    float total = 0.0f;
    for (int64_t c = 0; c < chunks; c += 8) {  // 8 loads in flight, added in chunk order
      float v[8];
#pragma unroll
      for (int u = 0; u < 8; ++u) v[u] = c + u < chunks ? partial[(k * chunks + c + u) * C + col] : 0.0f;
#pragma unroll
      for (int u = 0; u < 8; ++u) {
        if (c + u < chunks) total = vadd(total, v[u]);
      }
    }
    out.dst[k][col] = vadd(out.dst[k][col], total);
  }
}

// Launches the second pass on stream: partial holds the (K, chunks, C) chunk sums.
template <int K>
void column_combine(ColumnTargets<K> out, const float* partial, int64_t N, int C, cudaStream_t stream) {
  ZT_LAUNCH(static_cast<unsigned>((C + 255) / 256), 256, stream, column_combine_kernel<K>)(out, partial, column_chunks(N), C);
}

// Launches both passes on stream. workspace: column_workspace_floats(K, N, C) floats.
template <int K, class F>
void column_sums(ColumnTargets<K> out, int64_t N, int C, F f, float* workspace, cudaStream_t stream) {
  if (N <= 0 || C <= 0) return;
  const dim3 block(32, kColumnLanes), grid(static_cast<unsigned>((C + 31) / 32), static_cast<unsigned>(column_chunks(N)));
  ZT_LAUNCH(grid, block, stream, column_chunk_kernel<K, F>)(workspace, N, C, f);
  column_combine<K>(out, workspace, N, C, stream);
}

}  // namespace zt::cuda
