// The flash attention forward (flash_attention.h): one block of 4 warps per (64 query rows,
// batch x head), heaviest query blocks first; each warp owns 16 rows and walks the key
// tiles 0..its block's diagonal, keeping the running row max m and sum l (FlashAttention-2);
// the next K and V tiles load (cp.async) while the current ones are multiplied.
#include <cmath>

#include "kernels/cuda/flash_attention.h"
#include "kernels/cuda/flash_kernels.cuh"
#include "kernels/cuda/flash_tiles.cuh"
#include "kernels/cuda/launch.h"

namespace zt::cuda::flash {

namespace {

// Rescales the running statistics of this thread's two rows by tile s (scores, -inf where
// masked) and turns s into the tile's unnormalized probabilities exp2((s - m) scale_log2).
template <int HS>
__device__ __forceinline__ void online_softmax(float (&s)[kTile / 8][4], float (&o)[HS / 8][4], float (&m)[2],
                                               float (&l)[2], float scale_log2) {
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    float mx = m[r];
#pragma unroll
    for (int n = 0; n < kTile / 8; ++n) mx = fmaxf(mx, fmaxf(s[n][2 * r], s[n][2 * r + 1]));
    mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
    mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
    const float corr = exp2f((m[r] - mx) * scale_log2);  // 0 on the first tile (m = -inf)
    const float mo = mx * scale_log2;
    m[r] = mx;
    float sum = 0.0f;
#pragma unroll
    for (int n = 0; n < kTile / 8; ++n) {
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        const float p = exp2f(s[n][2 * r + e] * scale_log2 - mo);
        s[n][2 * r + e] = p;
        sum += p;
      }
    }
    l[r] = l[r] * corr + sum;
#pragma unroll
    for (int n = 0; n < HS / 8; ++n) o[n][2 * r] *= corr, o[n][2 * r + 1] *= corr;
  }
}

template <class H, int HS>
__global__ void __launch_bounds__(kThreads) forward_kernel(uint16_t* y, uint16_t* ycopy, float* lse,
                                                           const uint16_t* qkv, int T, int C, int NH,
                                                           float scale_log2) {
  constexpr int kSize = kTile * kStride<HS>;
  __shared__ __align__(16) uint16_t q_s[kSize], k_s[2][kSize], v_s[2][kSize];  // K and V double-buffered
  const int qb = gridDim.x - 1 - blockIdx.x, bh = blockIdx.y, b = bh / NH, h = bh % NH;
  const int warp = threadIdx.x / 32, g = (threadIdx.x % 32) / 4, t = threadIdx.x % 4;
  const int64_t pitch = 3LL * C;
  const uint16_t* base = qkv + static_cast<int64_t>(b) * T * pitch + h * HS;
  load_rows_async<HS>(q_s, base, pitch, qb * kTile, T);
  load_rows_async<HS>(k_s[0], base + C, pitch, 0, T);
  load_rows_async<HS>(v_s[0], base + 2 * C, pitch, 0, T);
  commit_loads();
  uint32_t qf[HS / 16][4];
  float o[HS / 8][4], m[2] = {-INFINITY, -INFINITY}, l[2] = {0.0f, 0.0f};
  zero(o);
  const int row0 = qb * kTile + warp * 16;
  for (int kb = 0; kb <= qb; ++kb) {
    if (kb < qb) {  // the next key tile loads while this one is used
      load_rows_async<HS>(k_s[(kb + 1) & 1], base + C, pitch, (kb + 1) * kTile, T);
      load_rows_async<HS>(v_s[(kb + 1) & 1], base + 2 * C, pitch, (kb + 1) * kTile, T);
    }
    current_tiles_ready();
    if (kb == 0) {
#pragma unroll
      for (int k = 0; k < HS / 16; ++k) load_a(qf[k], q_s, kStride<HS>, warp * 16, k * 16);
    }
    float s[kTile / 8][4];
    zero(s);
    product<H, kTile, HS>(s, qf, k_s[kb & 1], kStride<HS>);
    if (kb == qb) causal_mask(s, row0, kb * kTile);
    online_softmax<HS>(s, o, m, l, scale_log2);
    product_from_c<H, HS>(o, s, v_s[kb & 1], kStride<HS>);
    __syncthreads();  // this tile's buffers are free for the load two tiles on
  }
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    l[r] += __shfl_xor_sync(0xffffffffu, l[r], 1);
    l[r] += __shfl_xor_sync(0xffffffffu, l[r], 2);
    const int row = row0 + g + 8 * r;
    if (t == 0 && row < T) lse[static_cast<int64_t>(bh) * T + row] = m[r] * scale_log2 + log2f(l[r]);
  }
  const int64_t out = static_cast<int64_t>(b) * T * C + h * HS;
  store_rows<H, HS>(y + out, C, o, row0, T, 1.0f / l[0], 1.0f / l[1]);
  store_rows<H, HS>(ycopy + out, C, o, row0, T, 1.0f / l[0], 1.0f / l[1]);
}

}  // namespace

template <class H, int HS>
void launch_forward(uint16_t* y, uint16_t* ycopy, float* lse, const uint16_t* qkv, int B, int T, int C, int NH,
                    cudaStream_t stream) {
  const dim3 grid((T + kTile - 1) / kTile, B * NH);
  const float scale_log2 = static_cast<float>(1.0 / std::sqrt(static_cast<double>(HS)) / std::log(2.0));
  ZT_LAUNCH(grid, kThreads, stream, forward_kernel<H, HS>)(y, ycopy, lse, qkv, T, C, NH, scale_log2);
  check_launch("flash forward_kernel");
}

#define ZT_FLASH_FORWARD(H, HS)                                                                                 \
  template void launch_forward<H, HS>(uint16_t*, uint16_t*, float*, const uint16_t*, int, int, int, int, \
                                      cudaStream_t);
ZT_FLASH_FORWARD(Bf16, 16)
ZT_FLASH_FORWARD(Bf16, 32)
ZT_FLASH_FORWARD(Bf16, 64)
ZT_FLASH_FORWARD(F16, 16)
ZT_FLASH_FORWARD(F16, 32)
ZT_FLASH_FORWARD(F16, 64)
#undef ZT_FLASH_FORWARD

}  // namespace zt::cuda::flash
