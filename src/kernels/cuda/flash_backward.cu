// The flash attention backward (flash_attention.h), deterministic: D = rowsum(dO o O) per
// query; then one block per (64 keys, batch x head) accumulates dK and dV over the query
// tiles from the diagonal on, in order; then one block per (64 queries, batch x head)
// accumulates dQ over the key tiles up to the diagonal, in order. P and dS are recomputed
// from the saved log-sum-exp in both; no sum is split between blocks, so there are no atomics.
// Tiles load by cp.async, double-buffered; the products read B operands row-major through
// ldmatrix .trans, so no tile is stored transposed.
#include <cmath>

#include "kernels/cuda/flash_attention.h"
#include "kernels/cuda/flash_kernels.cuh"
#include "kernels/cuda/flash_tiles.cuh"
#include "kernels/cuda/launch.h"
#include "kernels/cuda/pack.cuh"

namespace zt::cuda::flash {

namespace {

// dsum[(b NH + h) T + t] = sum over the head's channels of dO o O, in channel order; the
// head's channels read by 16-byte loads, all in flight at once, where both rows are
// 16-byte aligned (a head's row is 32 bytes or more), else one by one.
template <class H, int HS>
__global__ void dsum_kernel(float* dsum, const uint16_t* dy, const uint16_t* y, int B, int T, int NH, bool packed) {
  const int64_t n = static_cast<int64_t>(B) * T * NH;
  for (int64_t e = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; e < n; e += int64_t{gridDim.x} * blockDim.x) {
    const int h = static_cast<int>(e % NH);
    const int64_t bt = e / NH, b = bt / T, t = bt % T;
    const uint16_t* a = dy + e * HS;  // (B, T, NH, HS) is (B, T, C)
    const uint16_t* o = y + e * HS;
    float acc = 0.0f;
    if (packed) {
      float av[HS], ov[HS];
#pragma unroll
      for (int d = 0; d < HS; d += 8) {
        load_pack<H>(a + d, av + d);
        load_pack<H>(o + d, ov + d);
      }
#pragma unroll
      for (int d = 0; d < HS; ++d) acc += av[d] * ov[d];
    } else {
      for (int d = 0; d < HS; ++d) acc += H::load(a[d]) * H::load(o[d]);
    }
    dsum[(b * NH + h) * T + t] = acc;
  }
}

// The 64 rows of lse2 and D of query tile q0 / 64 into shared memory (0 past T), as
// asynchronous copies in the caller's open group, so no thread waits on them before the
// group's wait (a plain load here held the block for a global load's latency each tile).
__device__ __forceinline__ void load_row_stats(float* lse_s, float* dsum_s, const float* lse, const float* dsum,
                                               int64_t bh_row, int q0, int T) {
  static_assert(kThreads >= kTile, "a row a thread");
  const int r = threadIdx.x;
  if (r >= kTile) return;
  const bool in = q0 + r < T;
  const int64_t at = bh_row + (in ? q0 + r : 0);  // row 0 of the head always exists (T >= 1)
  copy4_async(lse_s + r, lse + at, in);
  copy4_async(dsum_s + r, dsum + at, in);
}

// A warp's A fragments of its 16 rows of two (64, HS) tiles, loaded once per block.
template <int HS>
__device__ __forceinline__ void load_pair(uint32_t (&x)[HS / 16][4], uint32_t (&y)[HS / 16][4], const uint16_t* xs,
                                          const uint16_t* ys) {
  const int warp = threadIdx.x / 32;
#pragma unroll
  for (int k = 0; k < HS / 16; ++k) {
    load_a(x[k], xs, kStride<HS>, warp * 16, k * 16);
    load_a(y[k], ys, kStride<HS>, warp * 16, k * 16);
  }
}

// The two tile kernels' arguments.
struct BackwardArgs {
  uint16_t* dqkv;
  const uint16_t *dy, *qkv;
  const float *lse, *dsum;
  uint16_t* ds;  // the dS tiles (ds_tile), or null: the dQ kernel recomputes dS
  int T, C, NH;
  float scale_log2, scale;
};

// Tile pair (query tile qb, key tile kb <= qb) of head bh in the dS tiles: 64 x 64 values each,
// row = key, column = query (dS^T, as the dK/dV kernel holds it), a head's pairs query tile
// by query tile, so the dQ kernel reads its tiles in order.
__device__ __forceinline__ uint16_t* ds_tile(uint16_t* ds, int bh, int tiles, int qb, int kb) {
  const int64_t pairs = static_cast<int64_t>(tiles) * (tiles + 1) / 2;
  return ds + (bh * pairs + qb * (qb + 1) / 2 + kb) * kTile * kTile;
}

// Stores this warp's 16 rows of a dS^T tile, packed as A fragments (to_a of each k-step), at
// rows warp * 16 + g (+ 8) and columns 16kk + 2t (+ 8) of the 64 x 64 tile.
__device__ __forceinline__ void store_ds(uint16_t* tile, const uint32_t (&a)[kTile / 16][4]) {
  const int g = (threadIdx.x % 32) / 4, t = threadIdx.x % 4, row = (threadIdx.x / 32) * 16 + g;
#pragma unroll
  for (int kk = 0; kk < kTile / 16; ++kk) {
    uint16_t* p = tile + row * kTile + 16 * kk + 2 * t;
    *reinterpret_cast<uint32_t*>(p) = a[kk][0];
    *reinterpret_cast<uint32_t*>(p + 8 * kTile) = a[kk][1];
    *reinterpret_cast<uint32_t*>(p + 8) = a[kk][2];
    *reinterpret_cast<uint32_t*>(p + 8 * kTile + 8) = a[kk][3];
  }
}

// Where this block's (batch, head) = blockIdx.y starts: its q (k = q + C, v = q + 2C) and dO
// columns, the first row of its lse and D, and its dqkv columns.
template <int HS>
struct HeadView {
  int64_t pitch, stats;
  const uint16_t *qkv, *dy;
  uint16_t* dqkv;
  __device__ explicit HeadView(const BackwardArgs& a) {
    const int b = blockIdx.y / a.NH, h = blockIdx.y % a.NH;
    pitch = 3LL * a.C;
    stats = static_cast<int64_t>(blockIdx.y) * a.T;
    qkv = a.qkv + static_cast<int64_t>(b) * a.T * pitch + h * HS;
    dy = a.dy + static_cast<int64_t>(b) * a.T * a.C + h * HS;
    dqkv = a.dqkv + static_cast<int64_t>(b) * a.T * pitch + h * HS;
  }
};

// Per key tile: dK and dV over the query tiles from the diagonal on; Q and dO tiles
// double-buffered (the next pair loads while this one is used).
template <class H, int HS>
__global__ void __launch_bounds__(kThreads) dkdv_kernel(BackwardArgs a) {
  constexpr int kSize = kTile * kStride<HS>;
  __shared__ __align__(16) uint16_t q_s[2][kSize], do_s[2][kSize];
  __shared__ __align__(16) float lse_s[2][kTile], dsum_s[2][kTile];
  const HeadView<HS> v(a);
  const int kb = blockIdx.x, nq = gridDim.x, T = a.T, C = a.C;
  const int64_t pitch = v.pitch;
  const uint16_t *base = v.qkv, *dbase = v.dy;
  load_rows_async<HS>(q_s[1], base + C, pitch, kb * kTile, T);       // this block's K rows, staged
  load_rows_async<HS>(do_s[1], base + 2 * C, pitch, kb * kTile, T);  // and its V rows
  commit_loads();
  load_rows_async<HS>(q_s[0], base, pitch, kb * kTile, T);  // the first query tile (the diagonal)
  load_rows_async<HS>(do_s[0], dbase, C, kb * kTile, T);
  load_row_stats(lse_s[0], dsum_s[0], a.lse, a.dsum, v.stats, kb * kTile, T);
  commit_loads();
  wait_loads<1>();
  __syncthreads();
  uint32_t kf[HS / 16][4], vf[HS / 16][4];
  load_pair<HS>(kf, vf, q_s[1], do_s[1]);
  __syncthreads();  // the staging buffers are free
  float dk[HS / 8][4], dv[HS / 8][4];
  zero(dk);
  zero(dv);
  const int row0 = kb * kTile + (threadIdx.x / 32) * 16;
  for (int qb = kb; qb < nq; ++qb) {
    const int cur = (qb - kb) & 1, nxt = cur ^ 1;
    if (qb + 1 < nq) {
      load_rows_async<HS>(q_s[nxt], base, pitch, (qb + 1) * kTile, T);
      load_rows_async<HS>(do_s[nxt], dbase, C, (qb + 1) * kTile, T);
      load_row_stats(lse_s[nxt], dsum_s[nxt], a.lse, a.dsum, v.stats, (qb + 1) * kTile, T);
    }
    current_tiles_ready();
    float s[kTile / 8][4], dp[kTile / 8][4];
    scores_and_dp<H, HS>(s, dp, kf, q_s[cur], vf, do_s[cur]);  // S^T (keys x queries), dP^T
    tile_probabilities<false>(s, dp, qb, kb, row0, qb * kTile, T, a.scale_log2, lse_s[cur], dsum_s[cur]);
    product_from_c<H, HS>(dv, s, do_s[cur], kStride<HS>);  // dV += P^T dO
    uint32_t dsa[kTile / 16][4];
#pragma unroll
    for (int kk = 0; kk < kTile / 16; ++kk) to_a<H>(dsa[kk], dp, kk);
    if (a.ds != nullptr) store_ds(ds_tile(a.ds, blockIdx.y, nq, qb, kb), dsa);
    product_from_a<H, HS>(dk, dsa, q_s[cur], kStride<HS>);  // dK += dS^T Q
    __syncthreads();
  }
  store_rows<H, HS>(v.dqkv + C, pitch, dk, row0, T, a.scale, a.scale);
  store_rows<H, HS>(v.dqkv + 2 * C, pitch, dv, row0, T, 1.0f, 1.0f);
}

// Per query tile: dQ over the key tiles up to the diagonal; K and V double-buffered.
template <class H, int HS>
__global__ void __launch_bounds__(kThreads) dq_kernel(BackwardArgs a) {
  constexpr int kSize = kTile * kStride<HS>;
  __shared__ __align__(16) uint16_t k_s[2][kSize], v_s[2][kSize];
  __shared__ __align__(16) float lse_s[kTile], dsum_s[kTile];
  const HeadView<HS> v(a);
  const int qb = gridDim.x - 1 - blockIdx.x, T = a.T, C = a.C;
  const int64_t pitch = v.pitch;
  const uint16_t* base = v.qkv;
  load_rows_async<HS>(k_s[1], base, pitch, qb * kTile, T);  // Q rows, staged
  load_rows_async<HS>(v_s[1], v.dy, C, qb * kTile, T);     // dO rows
  load_row_stats(lse_s, dsum_s, a.lse, a.dsum, v.stats, qb * kTile, T);
  commit_loads();
  load_rows_async<HS>(k_s[0], base + C, pitch, 0, T);  // the first key tile
  load_rows_async<HS>(v_s[0], base + 2 * C, pitch, 0, T);
  commit_loads();
  wait_loads<1>();
  __syncthreads();
  uint32_t qf[HS / 16][4], dof[HS / 16][4];
  load_pair<HS>(qf, dof, k_s[1], v_s[1]);
  __syncthreads();
  float dq[HS / 8][4];
  zero(dq);
  const int row0 = qb * kTile + (threadIdx.x / 32) * 16;
  for (int kb = 0; kb <= qb; ++kb) {
    if (kb < qb) {
      load_rows_async<HS>(k_s[(kb + 1) & 1], base + C, pitch, (kb + 1) * kTile, T);
      load_rows_async<HS>(v_s[(kb + 1) & 1], base + 2 * C, pitch, (kb + 1) * kTile, T);
    }
    current_tiles_ready();
    float s[kTile / 8][4], dp[kTile / 8][4];
    scores_and_dp<H, HS>(s, dp, qf, k_s[kb & 1], dof, v_s[kb & 1]);  // S (queries x keys), dP
    tile_probabilities<true>(s, dp, qb, kb, row0, kb * kTile, T, a.scale_log2, lse_s, dsum_s);
    product_from_c<H, HS>(dq, dp, k_s[kb & 1], kStride<HS>);  // dQ += dS K
    __syncthreads();
  }
  store_rows<H, HS>(v.dqkv, pitch, dq, row0, T, a.scale, a.scale);
}

// Per query tile, with the dS tiles the dK/dV kernel stored: dQ = scale sum over the key tiles
// up to the diagonal of dS K, the tiles in order; dS^T and K double-buffered. Each warp's A
// fragments (its 16 queries x 16 keys a k-step) come from the dS^T tile by ldmatrix .trans.
template <class H, int HS>
__global__ void __launch_bounds__(kThreads) dq_stored_kernel(BackwardArgs a) {
  __shared__ __align__(16) uint16_t ds_s[2][kTile * kStride<kTile>], k_s[2][kTile * kStride<HS>];
  const HeadView<HS> v(a);
  const int qb = gridDim.x - 1 - blockIdx.x, T = a.T, C = a.C, lane = threadIdx.x % 32, m = lane / 8;
  const int q0 = (threadIdx.x / 32) * 16;
  auto load = [&](int kb) {
    load_rows_async<kTile>(ds_s[kb & 1], ds_tile(a.ds, blockIdx.y, gridDim.x, qb, kb), kTile, 0, kTile);
    load_rows_async<HS>(k_s[kb & 1], v.qkv + C, v.pitch, kb * kTile, T);
  };
  load(0);
  commit_loads();  // the first tiles' group: each iteration's wait leaves only the next one in flight
  float dq[HS / 8][4];
  zero(dq);
  for (int kb = 0; kb <= qb; ++kb) {
    if (kb < qb) load(kb + 1);
    current_tiles_ready();
    uint32_t dsa[kTile / 16][4];
#pragma unroll
    for (int kk = 0; kk < kTile / 16; ++kk) {
      ldmatrix_x4_trans(dsa[kk], ds_s[kb & 1] + (16 * kk + 8 * (m / 2) + lane % 8) * kStride<kTile> + q0 + 8 * (m % 2));
    }
    product_from_a<H, HS>(dq, dsa, k_s[kb & 1], kStride<HS>);  // dQ += dS K
    __syncthreads();
  }
  store_rows<H, HS>(v.dqkv, v.pitch, dq, qb * kTile + q0, T, a.scale, a.scale);
}

}  // namespace

template <class H, int HS>
void launch_backward(uint16_t* dqkv, const uint16_t* dy, const uint16_t* qkv, const float* lse, float* dsum,
                     const uint16_t* ycopy, uint16_t* ds, int B, int T, int C, int NH, cudaStream_t stream) {
  const double scale = 1.0 / std::sqrt(static_cast<double>(HS));
  const float scale_log2 = static_cast<float>(scale / std::log(2.0));
  const int64_t rows = static_cast<int64_t>(B) * T * NH;
  ZT_LAUNCH(grid_for(rows, kThreads), kThreads, stream, dsum_kernel<H, HS>)(dsum, dy, ycopy, B, T, NH,
                                                               aligned16(dy) && aligned16(ycopy));
  check_launch("flash dsum_kernel");
  const dim3 grid((T + kTile - 1) / kTile, B * NH);
  const BackwardArgs args{dqkv, dy, qkv, lse, dsum, ds, T, C, NH, scale_log2, static_cast<float>(scale)};
  ZT_LAUNCH(grid, kThreads, stream, dkdv_kernel<H, HS>)(args);
  check_launch("flash dkdv_kernel");
  if (ds != nullptr) {
    ZT_LAUNCH(grid, kThreads, stream, dq_stored_kernel<H, HS>)(args);
  } else {
    ZT_LAUNCH(grid, kThreads, stream, dq_kernel<H, HS>)(args);
  }
  check_launch("flash dq_kernel");
}

#define ZT_FLASH_BACKWARD(H, HS)                                                                               \
  template void launch_backward<H, HS>(uint16_t*, const uint16_t*, const uint16_t*, const float*, float*, \
                                       const uint16_t*, uint16_t*, int, int, int, int, cudaStream_t);
ZT_FLASH_BACKWARD(Bf16, 16)
ZT_FLASH_BACKWARD(Bf16, 32)
ZT_FLASH_BACKWARD(Bf16, 64)
ZT_FLASH_BACKWARD(F16, 16)
ZT_FLASH_BACKWARD(F16, 32)
ZT_FLASH_BACKWARD(F16, 64)
#undef ZT_FLASH_BACKWARD

}  // namespace zt::cuda::flash
