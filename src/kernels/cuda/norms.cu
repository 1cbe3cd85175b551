// LayerNorm and RMSNorm (norms.h): a group of W threads per row plays the CPU's vector
// lanes (lane_order.cuh); each row's formulas are the CPU's (layernorm_impl.h,
// rmsnorm_impl.h), operation for operation.
#include "kernels/cuda/norms.h"

#include "kernels/cuda/column_reduce.cuh"
#include "kernels/cuda/half_bits.cuh"
#include "kernels/cuda/lane_order.cuh"
#include "kernels/cuda/launch.h"

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

template <class O, class H>
__global__ void layernorm_dinp_kernel(typename H::T* dinp, const typename H::T* dout, const typename H::T* inp,
                                      const typename H::T* weight, const float* mean, const float* rstd, int64_t N,
                                      int C) {
  constexpr int W = O::kWidth;
  const RowLane<W> g(N);
  const int64_t base = (g.live ? g.row : 0) * C;
  const float m = g.live ? mean[g.row] : 0.0f, s = g.live ? rstd[g.row] : 0.0f;
  float acc_d = 0.0f, acc_dn = 0.0f;
  if (g.live) {
    for (int i = g.lane; i < C; i += W) {
      const float n = vmul(vsub(H::load(inp[base + i]), m), s);
      const float dn = vmul(H::load(dout[base + i]), H::load(weight[i]));
      acc_d = vadd(acc_d, dn);
      acc_dn = madd<O::kFused>(dn, n, acc_dn);
    }
  }
  const float dmean = vdiv(group_sum<W>(acc_d), static_cast<float>(C));
  const float dnmean = vdiv(group_sum<W>(acc_dn), static_cast<float>(C));
  if (!g.live) return;
  for (int i = g.lane; i < C; i += W) {
    const float n = vmul(vsub(H::load(inp[base + i]), m), s);
    const float dn = vmul(H::load(dout[base + i]), H::load(weight[i]));
    const float grad = vmul(vsub(vsub(dn, dmean), vmul(n, dnmean)), s);
    dinp[base + i] = H::store(vadd(H::load(dinp[base + i]), grad));
  }
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

template <class O, class H>
__global__ void rmsnorm_dinp_kernel(typename H::T* dinp, const typename H::T* dout, const typename H::T* inp,
                                    const typename H::T* weight, const float* rstd, int64_t N, int C) {
  constexpr int W = O::kWidth;
  const RowLane<W> g(N);
  const int64_t base = (g.live ? g.row : 0) * C;
  float acc = 0.0f;
  if (g.live) {
    for (int i = g.lane; i < C; i += W) {
      const float u = vmul(H::load(dout[base + i]), H::load(weight[i]));
      acc = madd<O::kFused>(u, H::load(inp[base + i]), acc);
    }
  }
  const float dot = vdiv(group_sum<W>(acc), static_cast<float>(C));
  if (!g.live) return;
  const float s = rstd[g.row];
  const float c = vmul(vmul(s, s), dot);
  for (int i = g.lane; i < C; i += W) {
    const float u = vmul(H::load(dout[base + i]), H::load(weight[i]));
    const float grad = vmul(vsub(u, vmul(H::load(inp[base + i]), c)), s);
    dinp[base + i] = H::store(vadd(H::load(dinp[base + i]), grad));
  }
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
    layernorm_dinp_kernel<O, H><<<row_blocks(N, O::kWidth), kThreads, 0, stream>>>(
        static_cast<T*>(dinp), static_cast<const T*>(dout), static_cast<const T*>(inp),
        static_cast<const T*>(weight), mean, rstd, N, C);
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
    rmsnorm_dinp_kernel<O, H><<<row_blocks(N, O::kWidth), kThreads, 0, stream>>>(
        static_cast<T*>(dinp), static_cast<const T*>(dout), static_cast<const T*>(inp),
        static_cast<const T*>(weight), rstd, N, C);
    const RmsNormParamTerms<H> f{static_cast<const T*>(dout), static_cast<const T*>(inp), rstd, C};
    column_sums<1>(ColumnTargets<1>{{dweight}}, N, C, f, workspace, stream);
  });
  check_launch("rmsnorm_backward");
}

}  // namespace zt::cuda
