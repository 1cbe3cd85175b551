// Optimizer kernels (optimizer.h): AdamW, SGD and LAMB, elementwise in the CPU's
// operation order; the sums in the CPU's lane layouts with warp shuffles in place of the
// vector registers, then one thread adding the chunks in chunk order.
#include "kernels/cuda/optimizer.h"

#include "core/check.h"
#include "kernels/cuda/launch.h"
#include "kernels/cuda/lane_order.cuh"
#include "kernels/cuda/vmath.cuh"

namespace zt::cuda {

namespace {

constexpr int64_t kLambChunk = 1 << 14;        // kernels/cpu/impl/lamb_impl.h
constexpr int64_t kSumSquaresChunk = 1 << 16;  // kernels/cpu/impl/reduce_impl.h

__global__ void adamw_kernel(float* p, const float* g, float* m, float* v, int64_t n, AdamWArgs a) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += int64_t{gridDim.x} * blockDim.x) {
    const float gi = vmul(g[i], a.grad_scale);
    float pi = vmul(p[i], a.decay_factor);
    const float mi = vadd(vmul(m[i], a.beta1), vmul(gi, a.one_minus_beta1));
    const float vi = vadd(vmul(v[i], a.beta2), vmul(vmul(a.one_minus_beta2, gi), gi));
    const float denom = vadd(vdiv(vsqrt(vi), a.bias_correction2_sqrt), a.eps);
    pi = vadd(pi, vmul(a.neg_step_size, vdiv(mi, denom)));
    p[i] = pi;
    m[i] = mi;
    v[i] = vi;
  }
}

__global__ void sgd_kernel(float* p, const float* g_in, float* buf, int64_t n, SgdArgs a) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += int64_t{gridDim.x} * blockDim.x) {
    float g = vmul(g_in[i], a.grad_scale);
    if (a.weight_decay != 0.0f) g = vadd(g, vmul(a.weight_decay, p[i]));
    if (a.use_momentum) {
      const float b = a.first ? g : vadd(vmul(a.momentum, buf[i]), vmul(a.dampening_factor, g));
      buf[i] = b;
      g = a.nesterov ? vadd(g, vmul(a.momentum, b)) : b;
    }
    p[i] = vsub(p[i], vmul(a.lr, g));
  }
}

// u = m / denom + decay * p (lamb_impl.h's lamb_update_vec).
__device__ __forceinline__ float lamb_update(float p, float m, float v, const LambArgs& a) {
  const float denom = a.eps_inside_sqrt ? vsqrt(vadd(v, a.eps)) : vadd(vsqrt(v), a.eps);
  return vadd(vdiv(m, denom), vmul(a.decay, p));
}

// The 8-lane total of lamb_impl.h's lamb_lane_total, from the 8 threads of a group.
__device__ __forceinline__ double lamb_lane_total(double acc) {
  const unsigned full = 0xffffffffu;
  double a[8];
#pragma unroll
  for (int j = 0; j < 8; ++j) a[j] = __shfl_sync(full, acc, j, 8);
  return ((a[0] + a[4]) + (a[2] + a[6])) + ((a[1] + a[5]) + (a[3] + a[7]));
}

// Thread (chunk c, lane j): elements lo + j, lo + j + 8, ... of chunk c, in order.
__global__ void lamb_moments_kernel(const float* p, const float* g, float* m, float* v, int64_t n, LambArgs a,
                                    double* partial, int64_t nchunks) {
  const int64_t t = blockIdx.x * int64_t{blockDim.x} + threadIdx.x;
  const int64_t c = t / 8;
  const int j = static_cast<int>(t % 8);
  double acc_p = 0.0, acc_u = 0.0;
  if (c < nchunks) {
    const int64_t lo = c * kLambChunk, hi = lo + kLambChunk < n ? lo + kLambChunk : n;
    for (int64_t i = lo + j; i < hi; i += 8) {
      const float gi = vmul(g[i], a.grad_scale);
      const float mi = vadd(vmul(m[i], a.beta1), vmul(gi, a.one_minus_beta1));
      const float vi = vadd(vmul(v[i], a.beta2), vmul(vmul(a.one_minus_beta2, gi), gi));
      m[i] = mi;
      v[i] = vi;
      const float u = lamb_update(p[i], mi, vi, a);
      acc_p += static_cast<double>(p[i]) * static_cast<double>(p[i]);
      acc_u += static_cast<double>(u) * static_cast<double>(u);
    }
  }
  const double tp = lamb_lane_total(acc_p), tu = lamb_lane_total(acc_u);
  if (c < nchunks && j == 0) {
    partial[2 * c] = tp;
    partial[2 * c + 1] = tu;
  }
}

__global__ void lamb_sums_kernel(LambSums* sums, const double* partial, int64_t nchunks) {
  double sp = sums->param_sq, su = sums->update_sq;
  for (int64_t c = 0; c < nchunks; ++c) {
    sp += partial[2 * c];
    su += partial[2 * c + 1];
  }
  sums->param_sq = sp;
  sums->update_sq = su;
}

__global__ void lamb_apply_kernel(float* p, const float* m, const float* v, int64_t n, LambArgs a,
                                  const LambSums* sums) {
  const float neg_step = lamb_neg_step(*sums, a);
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += int64_t{gridDim.x} * blockDim.x) {
    const float pi = p[i];
    p[i] = vadd(pi, vmul(neg_step, lamb_update(pi, m[i], v[i], a)));
  }
}

// One group of 2W threads per 64 Ki chunk; thread l holds the CPU's accumulator lane l
// (a0 for l < W, a1 for l >= W: reduce_impl.h's two vectors).
template <int W, bool kFused>
__global__ void sum_squares_kernel(double* partial, const float* x, int64_t n, int64_t nchunks) {
  constexpr int G = 2 * W;
  const int64_t t = blockIdx.x * int64_t{blockDim.x} + threadIdx.x;
  const int64_t c = t / G;
  const int l = static_cast<int>(t % G);
  auto sq = [](float a, float acc) { return madd<kFused>(a, a, acc); };
  float acc = 0.0f;
  if (c < nchunks) {
    const int64_t lo = c * kSumSquaresChunk, hi = lo + kSumSquaresChunk < n ? lo + kSumSquaresChunk : n;
    int64_t i = lo;
    for (; i + 8 * G <= hi; i += 8 * G) {  // eight loads in flight, then the lane's sums in order
      float v[8];
#pragma unroll
      for (int u = 0; u < 8; ++u) v[u] = x[i + u * G + l];
#pragma unroll
      for (int u = 0; u < 8; ++u) acc = sq(v[u], acc);
    }
    for (; i + G <= hi; i += G) acc = sq(x[i + l], acc);
    if (i + W <= hi) {  // one more vector into a0
      if (l < W) acc = sq(x[i + l], acc);
      i += W;
    }
    if (l >= W && i + (l - W) < hi) acc = sq(x[i + (l - W)], acc);  // the tail into a1
  }
  // reduce_add(a0 + a1): lane j < W adds a1[j], then the ISA's halving tree.
  const unsigned full = 0xffffffffu;
  float s = vadd(acc, __shfl_down_sync(full, acc, W, G));
#pragma unroll
  for (int off = W / 2; off >= 1; off /= 2) s = vadd(s, __shfl_down_sync(full, s, off, G));
  if (c < nchunks && l == 0) partial[c] = static_cast<double>(s);
}

__global__ void sum_chunks_kernel(double* out, const double* partial, int64_t nchunks, bool accumulate) {
  double total = 0.0;
  for (int64_t c = 0; c < nchunks; ++c) total += partial[c];
  *out = accumulate ? *out + total : total;
}

int64_t chunks(int64_t n, int64_t chunk) { return (n + chunk - 1) / chunk; }

unsigned blocks(int64_t threads) { return static_cast<unsigned>((threads + kThreads - 1) / kThreads); }

}  // namespace

void adamw_step(float* p, const float* g, float* m, float* v, int64_t n, const AdamWArgs& args, cudaStream_t stream) {
  if (n <= 0) return;
  adamw_kernel<<<grid_for(n), kThreads, 0, stream>>>(p, g, m, v, n, args);
  check_launch("adamw_step");
}

void sgd_step(float* p, const float* g, float* buf, int64_t n, const SgdArgs& args, cudaStream_t stream) {
  if (n <= 0) return;
  sgd_kernel<<<grid_for(n), kThreads, 0, stream>>>(p, g, buf, n, args);
  check_launch("sgd_step");
}

int64_t lamb_workspace_doubles(int64_t n) { return 2 * chunks(n, kLambChunk); }

void lamb_moments(const float* p, const float* g, float* m, float* v, int64_t n, const LambArgs& args, LambSums* sums,
                  double* workspace, cudaStream_t stream) {
  if (n <= 0) return;
  const int64_t nc = chunks(n, kLambChunk);
  lamb_moments_kernel<<<blocks(8 * nc), kThreads, 0, stream>>>(p, g, m, v, n, args, workspace, nc);
  check_launch("lamb_moments");
  lamb_sums_kernel<<<1, 1, 0, stream>>>(sums, workspace, nc);
  check_launch("lamb_moments (sums)");
}

void lamb_apply(float* p, const float* m, const float* v, int64_t n, const LambArgs& args, const LambSums* sums,
                cudaStream_t stream) {
  if (n <= 0) return;
  lamb_apply_kernel<<<grid_for(n), kThreads, 0, stream>>>(p, m, v, n, args, sums);
  check_launch("lamb_apply");
}

int64_t sum_squares_workspace_doubles(int64_t n) { return chunks(n, kSumSquaresChunk); }

void sum_squares(double* out, const float* x, int64_t n, CpuOrder order, double* workspace,
                 cudaStream_t stream, bool accumulate) {
  const int64_t nc = chunks(n, kSumSquaresChunk);
  if (nc > 0) {
    with_order(order, [&](auto o) {
      using O = decltype(o);
      sum_squares_kernel<O::kWidth, O::kFused><<<blocks(2 * O::kWidth * nc), kThreads, 0, stream>>>(workspace, x, n,
                                                                                                  nc);
    });
    check_launch("sum_squares");
  }
  sum_chunks_kernel<<<1, 1, 0, stream>>>(out, workspace, nc, accumulate);
  check_launch("sum_squares (chunks)");
}

}  // namespace zt::cuda
