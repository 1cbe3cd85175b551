// The tile primitives of the flash attention kernels (flash_attention.h): 64-row tiles of
// 16-bit rows staged in shared memory, fragments of the tensor-core product
// mma.sync.m16n8k16 (16-bit A and B, fp32 accumulators) read from them, and the packing of
// fp32 accumulators into 16-bit A fragments, over warp_ops.cuh's instructions.
//
// Fragment layouts (PTX ISA, m16n8k16, g = lane / 4, t = lane % 4):
// - A (16 x 16, row-major) a[0] = (g, 2t..2t+1), a[1] = (g+8, 2t..), a[2] = (g, 2t+8..),
//   a[3] = (g+8, 2t+8..), two 16-bit values per register, the lower column in the low half;
// - B (16 x 8, k x n) b0 = (k 2t..2t+1, n g), b1 = (k 2t+8..2t+9, n g): read by ldmatrix from
//   a tile that holds B transposed (row n, column k), or by ldmatrix .trans from one that
//   holds B row-major (row k, column n), two n-tiles a load;
// - C (16 x 8) c[0..1] = (g, 2t..2t+1), c[2..3] = (g+8, 2t..2t+1).
// Two C tiles side by side (columns 0-7 and 8-15) are exactly one A fragment, so the scores
// become the next product's left operand without leaving registers (FlashAttention-2).
//
// Tiles are padded by 8 elements a row, so the 32 lanes' fragment loads hit 32 distinct
// banks for every head size used (16, 32, 64: row strides of 12, 20, 36 words), and each
// ldmatrix phase's 8 rows of 16 bytes fall in 8 distinct 4-bank groups.
// Tiles arrive by cp.async, so a kernel double-buffers them: the next tiles load while the
// tensor cores work on these.
// Invariants: row sources are 16-byte aligned (C and the head size multiples of 8); rows at
// or past T load as zeros.
#pragma once

#include <cstdint>
#include <type_traits>

#include "kernels/cuda/async_copy.cuh"
#include "kernels/cuda/half_bits.cuh"
#include "kernels/cuda/warp_ops.cuh"

namespace zt::cuda::flash {

constexpr int kTile = 64;     // rows of every tile: 4 warps of 16
constexpr int kThreads = 128;
constexpr int kPad = 8;

template <int W>
constexpr int kStride = W + kPad;  // elements a tile row of W columns takes

// Rows [r0, r0 + 64) of a (rows, W) slab with row pitch `pitch` elements into tile (64, W),
// as asynchronous 16-byte copies (cp.async, sm_80+), rows at or past T zero-filled; the
// caller commits the group and waits for it (commit, wait<N>) before a barrier.
// Thread x copies chunk x % kChunks of rows x / kChunks + j kRowsAPass: a fixed, fully
// unrolled set, so the row and column arithmetic is done once and not per chunk.
template <int W>
__device__ __forceinline__ void load_rows_async(uint16_t* tile, const uint16_t* src, int64_t pitch, int r0, int T) {
  constexpr int kChunks = W / 8;  // 16-byte chunks a row
  constexpr int kRowsAPass = kThreads / kChunks;
  static_assert(kThreads % kChunks == 0 && kTile % kRowsAPass == 0, "whole rows a pass, whole passes a tile");
  const int r = threadIdx.x / kChunks, k = (threadIdx.x % kChunks) * 8;
  const int64_t step = kRowsAPass * pitch;
  const uint16_t* from = src + static_cast<int64_t>(r0 + r) * pitch + k;
  uint16_t* to = tile + r * kStride<W> + k;
#pragma unroll
  for (int j = 0; j < kTile / kRowsAPass; ++j, from += step) {
    const bool in = r0 + r + j * kRowsAPass < T;
    copy16_async(to + j * kRowsAPass * kStride<W>, in ? from : src, in);
  }
}

// Double buffering's step: commits the loads just issued (the next tiles, or none), waits
// for every earlier group (the current tiles) and makes them visible to the block.
__device__ __forceinline__ void current_tiles_ready() {
  commit_loads();
  wait_loads<1>();
  __syncthreads();
}

__device__ __forceinline__ uint32_t ld32(const uint16_t* p) { return *reinterpret_cast<const uint32_t*>(p); }

// The A fragment of the 16 x 16 block at (row0, col0) of a row-major tile of row stride s.
__device__ __forceinline__ void load_a(uint32_t (&a)[4], const uint16_t* tile, int s, int row0, int col0) {
  const int g = (threadIdx.x % 32) / 4, t = threadIdx.x % 4;
  const uint16_t* p = tile + (row0 + g) * s + col0 + 2 * t;
  a[0] = ld32(p);
  a[1] = ld32(p + 8 * s);
  a[2] = ld32(p + 8);
  a[3] = ld32(p + 8 * s + 8);
}

// The B fragments (k0..k0+15) of n-tiles n0 and n0 + 8 of a tile holding B transposed
// (row n, column k), by one ldmatrix .x4: b[0..1] for n0, b[2..3] for n0 + 8. Matrix m of
// the four is rows n0 + 8 (m / 2) .. +7 at columns k0 + 8 (m % 2) .. +7, and lane l gives
// the address of its row l % 8 (thread g, t receives row g, columns 2t and 2t + 1: the
// fragment layout above). Rows are 16-byte aligned.
__device__ __forceinline__ void load_b_pair(uint32_t (&b)[4], const uint16_t* tile, int s, int n0, int k0) {
  const int lane = threadIdx.x % 32, m = lane / 8;
  ldmatrix_x4(b, tile + (n0 + 8 * (m / 2) + lane % 8) * s + k0 + 8 * (m % 2));
}

// The B fragments of n-tiles n0 and n0 + 8 (k0..k0+15) of a tile holding B row-major
// (row k, column n), by ldmatrix .trans: b[0..1] for n0, b[2..3] for n0 + 8. Lane l gives the
// address of row k0 + l % 16 at column n0 + 8 (l / 16); rows are 16-byte aligned.
__device__ __forceinline__ void load_b_rows(uint32_t (&b)[4], const uint16_t* tile, int s, int k0, int n0) {
  const int lane = threadIdx.x % 32;
  ldmatrix_x4_trans(b, tile + (k0 + lane % 16) * s + n0 + 8 * (lane / 16));
}

// The A fragment of columns 16kk..16kk+15 of a warp's 16 rows held as C tiles c[0..].
template <class H>
__device__ __forceinline__ void to_a(uint32_t (&a)[4], const float (*c)[4], int kk) {
  a[0] = cvt_pack2<H>(c[2 * kk][0], c[2 * kk][1]);
  a[1] = cvt_pack2<H>(c[2 * kk][2], c[2 * kk][3]);
  a[2] = cvt_pack2<H>(c[2 * kk + 1][0], c[2 * kk + 1][1]);
  a[3] = cvt_pack2<H>(c[2 * kk + 1][2], c[2 * kk + 1][3]);
}

// acc[n] += A (this warp's 16 rows, K = 16 kk-steps held in a) times the tile's B^T rows.
// Each accumulator sums its k-steps in order, as one n-tile at a time would.
template <class H, int N, int K>
__device__ __forceinline__ void product(float (&acc)[N / 8][4], const uint32_t (&a)[K / 16][4], const uint16_t* bt,
                                        int s) {
  static_assert(N % 16 == 0, "n-tiles are loaded in pairs");
#pragma unroll
  for (int n = 0; n < N / 8; n += 2) {
#pragma unroll
    for (int k = 0; k < K / 16; ++k) {
      uint32_t b[4];
      load_b_pair(b, bt, s, n * 8, k * 16);
      const uint32_t lo[2] = {b[0], b[1]}, hi[2] = {b[2], b[3]};
      mma_m16n8k16<H>(acc[n], a[k], lo);
      mma_m16n8k16<H>(acc[n + 1], a[k], hi);
    }
  }
}

// acc[n] += a (one A fragment: k-step kk of this warp's 16 rows) times rows 16kk..16kk+15 of
// B, a (64, N) tile held row-major (row k, column n).
template <class H, int N>
__device__ __forceinline__ void k_step_product(float (&acc)[N / 8][4], const uint32_t (&a)[4],
                                               const uint16_t* b_rows, int s, int kk) {
#pragma unroll
  for (int n = 0; n < N / 8; n += 2) {
    uint32_t b[4];
    load_b_rows(b, b_rows, s, kk * 16, n * 8);
    const uint32_t lo[2] = {b[0], b[1]}, hi[2] = {b[2], b[3]};
    mma_m16n8k16<H>(acc[n], a, lo);
    mma_m16n8k16<H>(acc[n + 1], a, hi);
  }
}

// acc[n] += (C tiles c of this warp's 16 rows x 64 columns, rounded to 16 bits) times B, a
// (64, N) tile held row-major (row k, column n).
template <class H, int N>
__device__ __forceinline__ void product_from_c(float (&acc)[N / 8][4], const float (*c)[4], const uint16_t* b_rows,
                                               int s) {
#pragma unroll
  for (int kk = 0; kk < kTile / 16; ++kk) {
    uint32_t a[4];
    to_a<H>(a, c, kk);
    k_step_product<H, N>(acc, a, b_rows, s, kk);
  }
}

// The same product from A fragments already packed (a[kk] = to_a of k-step kk).
template <class H, int N>
__device__ __forceinline__ void product_from_a(float (&acc)[N / 8][4], const uint32_t (&a)[kTile / 16][4],
                                               const uint16_t* b_rows, int s) {
#pragma unroll
  for (int kk = 0; kk < kTile / 16; ++kk) k_step_product<H, N>(acc, a[kk], b_rows, s, kk);
}

// Zeroes a warp's accumulators.
template <int N>
__device__ __forceinline__ void zero(float (&acc)[N][4]) {
#pragma unroll
  for (int n = 0; n < N; ++n) acc[n][0] = acc[n][1] = acc[n][2] = acc[n][3] = 0.0f;
}

// Writes a warp's 16 x W accumulators times `scale`, rounded to H, at row pitch `pitch`:
// rows at or past T are skipped. row0 is the warp's first row.
template <class H, int W>
__device__ __forceinline__ void store_rows(uint16_t* dst, int64_t pitch, const float (&acc)[W / 8][4], int row0,
                                           int T, float scale0, float scale1) {
  const int g = (threadIdx.x % 32) / 4, t = threadIdx.x % 4;
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const int row = row0 + g + 8 * r;
    if (row >= T) continue;
    const float sc = r == 0 ? scale0 : scale1;
#pragma unroll
    for (int n = 0; n < W / 8; ++n) {
      *reinterpret_cast<uint32_t*>(dst + row * pitch + n * 8 + 2 * t) =
          cvt_pack2<H>(acc[n][2 * r] * sc, acc[n][2 * r + 1] * sc);
    }
  }
}

}  // namespace zt::cuda::flash
