// LayerNorm and RMSNorm (norms.h): a group of W threads per row plays the CPU's vector
// lanes (lane_order.cuh); each row's formulas are the CPU's (layernorm_impl.h,
// rmsnorm_impl.h), operation for operation. The input-gradient kernels stage their rows in
// shared memory first (row_stage.cuh) and write the gradient elementwise in 16-byte packs.
#include "kernels/cuda/norms.h"

#include "kernels/cuda/column_reduce.cuh"
#include "kernels/cuda/half_bits.cuh"
#include "kernels/cuda/lane_order.cuh"
#include "kernels/cuda/launch.h"
#include "kernels/cuda/row_stage.cuh"

namespace zt::cuda {

namespace {

constexpr float kLayerNormEps = 1e-5f;

// The row of this thread's group and its lane; live is false past the last row.
template <int W>
struct RowLane {
  int64_t row;
  int lane;
  bool live;
  __device__ RowLane(int64_t N) {
    const int64_t t = blockIdx.x * int64_t{blockDim.x} + threadIdx.x;
    row = t / W;
    lane = static_cast<int>(t % W);
    live = row < N;
  }
};

template <class O, class H>
__global__ void layernorm_forward_kernel(typename H::T* out, float* mean, float* rstd, const typename H::T* inp,
                                         const typename H::T* weight, const typename H::T* bias, int64_t N, int C) {
  constexpr int W = O::kWidth;
  const RowLane<W> g(N);
  const typename H::T* x = inp + (g.live ? g.row : 0) * C;
  float acc = 0.0f;
  if (g.live) for (int i = g.lane; i < C; i += W) acc = vadd(acc, H::load(x[i]));
  const float m = vdiv(group_sum<W>(acc), static_cast<float>(C));
  acc = 0.0f;
  if (g.live) {
    for (int i = g.lane; i < C; i += W) {
      const float d = vsub(H::load(x[i]), m);
      acc = madd<O::kFused>(d, d, acc);
    }
  }
  const float var = vdiv(group_sum<W>(acc), static_cast<float>(C));
  const float s = vdiv(1.0f, vsqrt(vadd(var, kLayerNormEps)));
  if (!g.live) return;
  typename H::T* y = out + g.row * C;
  for (int i = g.lane; i < C; i += W) {
    const float n = vmul(vsub(H::load(x[i]), m), s);
    y[i] = H::store(madd<O::kFused>(n, H::load(weight[i]), H::load(bias[i])));
  }
  if (g.lane == 0) {
    mean[g.row] = m;
    rstd[g.row] = s;
  }
}

// The rows of one block of the input-gradient kernels: `rows` rows of W lanes from row0,
// `count` of them before N; this thread's row (local) and lane.
template <int W>
struct BlockRows {
  int rows, count, local, lane;
  int64_t row0;
  bool live;
  __device__ BlockRows(int64_t N) {
    rows = static_cast<int>(blockDim.x) / W;
    row0 = blockIdx.x * int64_t{rows};
    count = static_cast<int>(N - row0 < rows ? N - row0 : rows);
    local = static_cast<int>(threadIdx.x) / W;
    lane = static_cast<int>(threadIdx.x) % W;
    live = local < count;
  }
};

// LayerNorm's input gradient, added to dinp: the block's rows of inp, dout and dinp staged
// (row_stage.cuh) when kStaged; per row, the lanes' sums of dn and dn * n, then every
// element from the row's four scalars.
template <class O, class H, bool kStaged>
__global__ void layernorm_dinp_kernel(typename H::T* dinp, const typename H::T* dout, const typename H::T* inp,
                                      const typename H::T* weight, const float* mean, const float* rstd, int64_t N,
                                      int C) {
  constexpr int W = O::kWidth;
  using T = typename H::T;
  __shared__ float terms[4][32];  // per row: mean, rstd, dmean, dnmean
  const BlockRows<W> b(N);
  const T* r[3];
  block_rows<kStaged>(r, {inp, dout, static_cast<const T*>(dinp)}, b.row0 * C, b.count * C, b.rows, C);
  const T *x = r[0] + (b.live ? b.local : 0) * C, *d = r[1] + (b.live ? b.local : 0) * C;
  const float m = b.live ? mean[b.row0 + b.local] : 0.0f, s = b.live ? rstd[b.row0 + b.local] : 0.0f;
  float acc_d = 0.0f, acc_dn = 0.0f;
  if (b.live) {
    for (int i = b.lane; i < C; i += W) {
      const float n = vmul(vsub(H::load(x[i]), m), s);
      const float dn = vmul(H::load(d[i]), H::load(weight[i]));
      acc_d = vadd(acc_d, dn);
      acc_dn = madd<O::kFused>(dn, n, acc_dn);
    }
  }
  const float dmean = vdiv(group_sum<W>(acc_d), static_cast<float>(C));
  const float dnmean = vdiv(group_sum<W>(acc_dn), static_cast<float>(C));
  if (b.live && b.lane == 0) {
    terms[0][b.local] = m;
    terms[1][b.local] = s;
    terms[2][b.local] = dmean;
    terms[3][b.local] = dnmean;
  }
  __syncthreads();
  block_store<H>(dinp + b.row0 * C, b.count * C, C, [&](int row, int c, int e) {
    const float rs = terms[1][row];
    const float n = vmul(vsub(H::load(r[0][e]), terms[0][row]), rs);
    const float dn = vmul(H::load(r[1][e]), H::load(weight[c]));
    const float grad = vmul(vsub(vsub(dn, terms[2][row]), vmul(n, terms[3][row])), rs);
    return vadd(H::load(r[2][e]), grad);
  });
}

// dweight += dy * n, dbias += dy (layernorm_impl.h's column loop).
template <class H>
struct LayerNormParamTerms {
  const typename H::T *dout, *inp;
  const float *mean, *rstd;
  int C;
  __device__ void operator()(int64_t r, int c, float* t) const {
    const float dy = H::load(dout[r * C + c]);
    t[0] = vmul(dy, vmul(vsub(H::load(inp[r * C + c]), mean[r]), rstd[r]));
    t[1] = dy;
  }
};

template <class O, class H>
__global__ void rmsnorm_forward_kernel(typename H::T* out, float* rstd, const typename H::T* inp,
                                       const typename H::T* weight, int64_t N, int C, float eps) {
  constexpr int W = O::kWidth;
  const RowLane<W> g(N);
  const typename H::T* x = inp + (g.live ? g.row : 0) * C;
  float acc = 0.0f;
  if (g.live) {
    for (int i = g.lane; i < C; i += W) {
      const float v = H::load(x[i]);
      acc = madd<O::kFused>(v, v, acc);
    }
  }
  const float ms = vdiv(group_sum<W>(acc), static_cast<float>(C));
  const float s = vdiv(1.0f, vsqrt(vadd(ms, eps)));
  if (!g.live) return;
  typename H::T* y = out + g.row * C;
  for (int i = g.lane; i < C; i += W) y[i] = H::store(vmul(vmul(H::load(x[i]), s), H::load(weight[i])));
  if (g.lane == 0) rstd[g.row] = s;
}

// RMSNorm's input gradient, added to dinp, staged as layernorm_dinp_kernel: per row the
// lanes' sum of (dout * weight) * inp, then every element from rstd and that dot.
template <class O, class H, bool kStaged>
__global__ void rmsnorm_dinp_kernel(typename H::T* dinp, const typename H::T* dout, const typename H::T* inp,
                                    const typename H::T* weight, const float* rstd, int64_t N, int C) {
  constexpr int W = O::kWidth;
  using T = typename H::T;
  __shared__ float terms[2][32];  // per row: rstd, rstd^2 * dot
  const BlockRows<W> b(N);
  const T* r[3];
  block_rows<kStaged>(r, {inp, dout, static_cast<const T*>(dinp)}, b.row0 * C, b.count * C, b.rows, C);
  const T *x = r[0] + (b.live ? b.local : 0) * C, *d = r[1] + (b.live ? b.local : 0) * C;
  float acc = 0.0f;
  if (b.live) {
    for (int i = b.lane; i < C; i += W) {
      const float u = vmul(H::load(d[i]), H::load(weight[i]));
      acc = madd<O::kFused>(u, H::load(x[i]), acc);
    }
  }
  const float dot = vdiv(group_sum<W>(acc), static_cast<float>(C));
  if (b.live && b.lane == 0) {
    const float s = rstd[b.row0 + b.local];
    terms[0][b.local] = s;
    terms[1][b.local] = vmul(vmul(s, s), dot);
  }
  __syncthreads();
  block_store<H>(dinp + b.row0 * C, b.count * C, C, [&](int row, int c, int e) {
    const float u = vmul(H::load(r[1][e]), H::load(weight[c]));
    const float grad = vmul(vsub(u, vmul(H::load(r[0][e]), terms[1][row])), terms[0][row]);
    return vadd(H::load(r[2][e]), grad);
  });
}

// dweight += dy * (x * rstd) (rmsnorm_impl.h's column loop).
template <class H>
struct RmsNormParamTerms {
  const typename H::T *dout, *inp;
  const float* rstd;
  int C;
  __device__ void operator()(int64_t r, int c, float* t) const {
    t[0] = vmul(H::load(dout[r * C + c]), vmul(H::load(inp[r * C + c]), rstd[r]));
  }
};

unsigned row_blocks(int64_t N, int W) { return static_cast<unsigned>((N * W + kThreads - 1) / kThreads); }

}  // namespace

int64_t norm_workspace_floats(int64_t N, int C) { return column_workspace_floats(2, N, C); }

void layernorm_forward(DType t, CpuOrder o, void* out, float* mean, float* rstd, const void* inp, const void* weight,
                       const void* bias, int64_t N, int C, cudaStream_t stream) {
  if (N <= 0) return;
  with_order_storage(o, t, [&](auto ord, auto h) {
    using O = decltype(ord);
    using H = decltype(h);
    using T = typename H::T;
    layernorm_forward_kernel<O, H><<<row_blocks(N, O::kWidth), kThreads, 0, stream>>>(
        static_cast<T*>(out), mean, rstd, static_cast<const T*>(inp), static_cast<const T*>(weight),
        static_cast<const T*>(bias), N, C);
  });
  check_launch("layernorm_forward");
}

void layernorm_backward(DType t, CpuOrder o, void* dinp, float* dweight, float* dbias, const void* dout,
                        const void* inp, const void* weight, const float* mean, const float* rstd, int64_t N, int C,
                        float* workspace, cudaStream_t stream) {
  if (N <= 0) return;
  with_order_storage(o, t, [&](auto ord, auto h) {
    using O = decltype(ord);
    using H = decltype(h);
    using T = typename H::T;
    launch_rows("layernorm_dinp", layernorm_dinp_kernel<O, H, true>, layernorm_dinp_kernel<O, H, false>,
                stage_plan(O::kWidth, C, sizeof(T), 3), O::kWidth, N, stream, static_cast<T*>(dinp),
                static_cast<const T*>(dout), static_cast<const T*>(inp), static_cast<const T*>(weight), mean, rstd,
                N, C);
    const LayerNormParamTerms<H> f{static_cast<const T*>(dout), static_cast<const T*>(inp), mean, rstd, C};
    column_sums<2>(ColumnTargets<2>{{dweight, dbias}}, N, C, f, workspace, stream);
  });
  check_launch("layernorm_backward");
}

void rmsnorm_forward(DType t, CpuOrder o, void* out, float* rstd, const void* inp, const void* weight, int64_t N,
                     int C, float eps, cudaStream_t stream) {
  if (N <= 0) return;
  with_order_storage(o, t, [&](auto ord, auto h) {
    using O = decltype(ord);
    using H = decltype(h);
    using T = typename H::T;
    rmsnorm_forward_kernel<O, H><<<row_blocks(N, O::kWidth), kThreads, 0, stream>>>(
        static_cast<T*>(out), rstd, static_cast<const T*>(inp), static_cast<const T*>(weight), N, C, eps);
  });
  check_launch("rmsnorm_forward");
}

void rmsnorm_backward(DType t, CpuOrder o, void* dinp, float* dweight, const void* dout, const void* inp,
                      const void* weight, const float* rstd, int64_t N, int C, float* workspace, cudaStream_t stream) {
  if (N <= 0) return;
  with_order_storage(o, t, [&](auto ord, auto h) {
    using O = decltype(ord);
    using H = decltype(h);
    using T = typename H::T;
    launch_rows("rmsnorm_dinp", rmsnorm_dinp_kernel<O, H, true>, rmsnorm_dinp_kernel<O, H, false>,
                stage_plan(O::kWidth, C, sizeof(T), 3), O::kWidth, N, stream, static_cast<T*>(dinp),
                static_cast<const T*>(dout), static_cast<const T*>(inp), static_cast<const T*>(weight), rstd, N, C);
    const RmsNormParamTerms<H> f{static_cast<const T*>(dout), static_cast<const T*>(inp), rstd, C};
    column_sums<1>(ColumnTargets<1>{{dweight}}, N, C, f, workspace, stream);
  });
  check_launch("rmsnorm_backward");
}

}  // namespace zt::cuda
