// What the flash attention kernels share beyond the tile primitives (flash_tiles.cuh): the
// causal mask of a diagonal tile, the backward's recomputed probabilities, and the launchers
// that flash_attention.cu dispatches to, one instantiation per (storage tag, head size).
#pragma once

#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdint>

#include "kernels/cuda/flash_tiles.cuh"

namespace zt::cuda::flash {

// Calls f(n, i, row, col) for each element s[n][i] this thread holds of a warp's 16 x 64
// C tiles whose first row is row0 and first column col0: row row0 + g + 8 (i / 2), column
// col0 + 8n + 2t + i % 2 (flash_tiles.cuh's C layout).
template <class F>
__device__ __forceinline__ void for_each_element(int row0, int col0, F&& f) {
  const int g = (threadIdx.x % 32) / 4, t = threadIdx.x % 4;
#pragma unroll
  for (int n = 0; n < kTile / 8; ++n) {
#pragma unroll
    for (int i = 0; i < 4; ++i) f(n, i, row0 + g + 8 * (i / 2), col0 + 8 * n + 2 * t + (i % 2));
  }
}

// Forward, diagonal tile: score (query row, key col) becomes -inf where the key comes after
// the query.
__device__ __forceinline__ void causal_mask(float (&s)[kTile / 8][4], int row0, int col0) {
  for_each_element(row0, col0, [&](int n, int i, int row, int col) {
    if (col > row) s[n][i] = -INFINITY;
  });
}

// Backward: s holds scores of this warp's 16 rows against a tile's 64 columns; row r is a
// query when queries_are_rows, else a key (and the columns are the queries). Each becomes
// P = exp2(s scale_log2 - lse2(query)), 0 where the key comes after the query or the
// query is at or past T; dp becomes dS = P (dP - D(query)). lse2 and dsum hold the query
// tile's 64 rows (16-byte aligned). Only a diagonal tile pair, or one whose query tile
// reaches T, can hold a dead element: the others take kMasked = false, the same values
// without the per-element index arithmetic, comparisons and selects. Each n-tile's query
// statistics are read once (as a float2 when the queries are the columns, 2t and 2t + 1).
template <bool kQueriesAreRows, bool kMasked>
__device__ __forceinline__ void probabilities(float (&s)[kTile / 8][4], float (&dp)[kTile / 8][4], int row0,
                                              int col0, int T, float scale_log2, const float* lse2,
                                              const float* dsum) {
  const int g = (threadIdx.x % 32) / 4, t = threadIdx.x % 4, local_row = (threadIdx.x / 32) * 16 + g;
#pragma unroll
  for (int n = 0; n < kTile / 8; ++n) {
    float2 l2, d2;  // (first, second) query: rows g and g + 8, or columns 2t and 2t + 1
    if constexpr (kQueriesAreRows) {
      l2 = make_float2(lse2[local_row], lse2[local_row + 8]);
      d2 = make_float2(dsum[local_row], dsum[local_row + 8]);
    } else {
      l2 = *reinterpret_cast<const float2*>(lse2 + 8 * n + 2 * t);
      d2 = *reinterpret_cast<const float2*>(dsum + 8 * n + 2 * t);
    }
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const bool second = kQueriesAreRows ? i >= 2 : i % 2 == 1;
      bool live = true;
      if constexpr (kMasked) {
        const int row = row0 + g + 8 * (i / 2), col = col0 + 8 * n + 2 * t + (i % 2);
        const int q = kQueriesAreRows ? row : col, key = kQueriesAreRows ? col : row;
        live = key <= q && q < T;
      }
      const float p = live ? exp2f(s[n][i] * scale_log2 - (second ? l2.y : l2.x)) : 0.0f;
      s[n][i] = p;
      dp[n][i] = live ? p * (dp[n][i] - (second ? d2.y : d2.x)) : 0.0f;
    }
  }
}

// probabilities for the tile pair (query tile qb, key tile kb): the masked instantiation
// only where an element can be dead (the diagonal, or a query tile reaching T).
template <bool kQueriesAreRows>
__device__ __forceinline__ void tile_probabilities(float (&s)[kTile / 8][4], float (&dp)[kTile / 8][4], int qb,
                                                   int kb, int row0, int col0, int T, float scale_log2,
                                                   const float* lse2, const float* dsum) {
  if (qb == kb || (qb + 1) * kTile > T) {
    probabilities<kQueriesAreRows, true>(s, dp, row0, col0, T, scale_log2, lse2, dsum);
  } else {
    probabilities<kQueriesAreRows, false>(s, dp, row0, col0, T, scale_log2, lse2, dsum);
  }
}

// The backward's two products of a tile pair: s = A x^T (scores) and dp = B y^T, from the
// warp's A fragments a, b and the (64, HS) row-major tiles x, y.
template <class H, int HS>
__device__ __forceinline__ void scores_and_dp(float (&s)[kTile / 8][4], float (&dp)[kTile / 8][4],
                                              const uint32_t (&a)[HS / 16][4], const uint16_t* x,
                                              const uint32_t (&b)[HS / 16][4], const uint16_t* y) {
  zero(s);
  zero(dp);
  product<H, kTile, HS>(s, a, x, kStride<HS>);
  product<H, kTile, HS>(dp, b, y, kStride<HS>);
}

template <class H, int HS>
void launch_forward(uint16_t* y, uint16_t* ycopy, float* lse, const uint16_t* qkv, int B, int T, int C, int NH,
                    cudaStream_t stream);
template <class H, int HS>
void launch_backward(uint16_t* dqkv, const uint16_t* dy, const uint16_t* qkv, const float* lse, float* dsum,
                     const uint16_t* ycopy, uint16_t* ds, int B, int T, int C, int NH, cudaStream_t stream);

}  // namespace zt::cuda::flash
