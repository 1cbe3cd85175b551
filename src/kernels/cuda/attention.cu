// Materialized causal attention (attention.h): permutes, batched cuBLASLt products and
// the causal softmax pair, one warp per score row.
#include "kernels/cuda/attention.h"

#include <cmath>

#include "kernels/cuda/half_bits.cuh"
#include "kernels/cuda/lane_order.cuh"
#include "kernels/cuda/launch.h"

namespace zt::cuda {

namespace {

// (B, T, 3, NH, hs) <-> three (B, NH, T, hs); one thread per (b, h, t, d).
template <class H, bool kToHeads>
__global__ void permute_kernel(typename H::T* heads0, typename H::T* heads1, typename H::T* heads2,
                               typename H::T* rows, int B, int T, int NH, int hs, int parts) {
  const int64_t total = static_cast<int64_t>(B) * NH * T * hs;
  const int C = NH * hs;
  for (int64_t e = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; e < total; e += int64_t{gridDim.x} * blockDim.x) {
    const int d = static_cast<int>(e % hs);
    const int t = static_cast<int>((e / hs) % T);
    const int h = static_cast<int>((e / (static_cast<int64_t>(hs) * T)) % NH);
    const int64_t b = e / (static_cast<int64_t>(hs) * T * NH);
    const int64_t r = ((b * T + t) * parts) * C + h * hs + d;
    typename H::T* heads[3] = {heads0, heads1, heads2};
    for (int p = 0; p < parts; ++p) {
      if (kToHeads) {
        heads[p][e] = rows[r + static_cast<int64_t>(p) * C];
      } else {
        rows[r + static_cast<int64_t>(p) * C] = heads[p][e];
      }
    }
  }
}

// Row r of the (B NH T, T) scores: query i = r % T sees keys 0..i. One warp per row.
template <class H>
__global__ void softmax_forward_kernel(typename H::T* P, const float* S, int64_t rows, int T) {
  const int64_t r = (blockIdx.x * int64_t{blockDim.x} + threadIdx.x) / 32;
  const int lane = threadIdx.x % 32;
  if (r >= rows) return;  // whole warps leave together
  const int len = static_cast<int>(r % T) + 1;
  const float* s = S + r * T;
  float mx = -INFINITY;
  for (int j = lane; j < len; j += 32) mx = vmax(mx, s[j]);
  const float m = group_max<32>(mx);
  float acc = 0.0f;
  for (int j = lane; j < len; j += 32) acc = vadd(acc, vexp<true>(vsub(s[j], m)));
  const float inv = vdiv(1.0f, group_sum<32>(acc));
  typename H::T* p = P + r * T;
  for (int j = lane; j < T; j += 32) p[j] = H::store(j < len ? vmul(vexp<true>(vsub(s[j], m)), inv) : 0.0f);
}

template <class H>
__global__ void softmax_backward_kernel(typename H::T* dS, const float* dP, const typename H::T* P, int64_t rows, int T,
                                        float scale) {
  const int64_t r = (blockIdx.x * int64_t{blockDim.x} + threadIdx.x) / 32;
  const int lane = threadIdx.x % 32;
  if (r >= rows) return;
  const int len = static_cast<int>(r % T) + 1;
  const float* d = dP + r * T;
  const typename H::T* p = P + r * T;
  float acc = 0.0f;
  for (int j = lane; j < len; j += 32) acc = vfmadd(d[j], H::load(p[j]), acc);
  const float dot = group_sum<32>(acc);
  typename H::T* out = dS + r * T;
  for (int j = lane; j < T; j += 32) {
    out[j] = H::store(j < len ? vmul(vmul(H::load(p[j]), vsub(d[j], dot)), scale) : 0.0f);
  }
}

// The workspace, carved in order.
struct Workspace {
  char* p;
  template <class X>
  X* take(size_t count) {
    X* out = reinterpret_cast<X*>(p);
    p += (count * sizeof(X) + 255) / 256 * 256;
    return out;
  }
};

// A strided-batched column-major product over the B NH heads (gemm_lt.h's conventions).
Status heads_gemm(LtGemm& lt, Matmul mm, int64_t sa, int64_t sb, int64_t sd, int batch, float alpha,
                  cudaStream_t stream) {
  mm.stride_a = sa;
  mm.stride_b = sb;
  mm.stride_d = sd;
  mm.batch = batch;
  mm.alpha = alpha;
  return lt.run(mm, stream);
}

// The sizes every pass uses.
struct Heads {
  int hs, batch;
  int64_t th, tt, btc;  // T hs, T T, B T C
  float scale;
  Heads(int B, int T, int C, int NH)
      : hs(C / NH), batch(B * NH), th(static_cast<int64_t>(T) * (C / NH)), tt(static_cast<int64_t>(T) * T),
        btc(static_cast<int64_t>(B) * T * C), scale(1.0f / std::sqrt(static_cast<float>(C / NH))) {}
  unsigned row_warps_blocks(int T) const {
    return static_cast<unsigned>((static_cast<int64_t>(batch) * T * 32 + kThreads - 1) / kThreads);
  }
};

}  // namespace

size_t attention_workspace_bytes(DType t, int B, int T, int C, int NH) {
  const size_t btc = static_cast<size_t>(B) * T * C, scores = static_cast<size_t>(B) * NH * T * T;
  auto round = [](size_t bytes) { return (bytes + 255) / 256 * 256; };
  return 7 * round(btc * dtype_size(t)) + round(scores * 4) + round(scores * dtype_size(t));
}

Status attention_forward(LtGemm& lt, DType t, void* atty, void* att, const void* qkv, int B, int T, int C, int NH,
                         void* workspace, cudaStream_t stream) {
  const Heads d(B, T, C, NH);
  Status s;
  with_storage(t, [&](auto h) {
    using H = decltype(h);
    using X = typename H::T;
    Workspace w{static_cast<char*>(workspace)};
    X *q = w.take<X>(d.btc), *k = w.take<X>(d.btc), *v = w.take<X>(d.btc), *y = w.take<X>(d.btc);
    float* S = w.take<float>(static_cast<size_t>(d.batch) * d.tt);
    permute_kernel<H, true><<<grid_for(d.btc), kThreads, 0, stream>>>(
        q, k, v, const_cast<X*>(static_cast<const X*>(qkv)), B, T, NH, d.hs, 3);
    check_launch("attention: permute qkv");
    s = heads_gemm(lt, column_major(true, false, T, T, d.hs, t, DType::kF32, k, d.hs, q, d.hs, S, T), d.th, d.th, d.tt,
                   d.batch, d.scale, stream);
    if (!s.ok()) return;
    softmax_forward_kernel<H><<<d.row_warps_blocks(T), kThreads, 0, stream>>>(static_cast<X*>(att), S,
                                                                              int64_t{d.batch} * T, T);
    check_launch("attention: softmax");
    s = heads_gemm(lt, column_major(false, false, d.hs, T, T, t, t, v, d.hs, att, T, y, d.hs), d.th, d.tt, d.th,
                   d.batch, 1.0f, stream);
    if (!s.ok()) return;
    permute_kernel<H, false><<<grid_for(d.btc), kThreads, 0, stream>>>(y, nullptr, nullptr, static_cast<X*>(atty), B,
                                                                        T, NH, d.hs, 1);
    check_launch("attention: unpermute y");
  });
  return s;
}

Status attention_backward(LtGemm& lt, DType t, void* dqkv, const void* datty, const void* qkv, const void* att, int B,
                          int T, int C, int NH, void* workspace, cudaStream_t stream) {
  const Heads d(B, T, C, NH);
  Status s;
  with_storage(t, [&](auto h) {
    using H = decltype(h);
    using X = typename H::T;
    Workspace w{static_cast<char*>(workspace)};
    X *q = w.take<X>(d.btc), *k = w.take<X>(d.btc), *v = w.take<X>(d.btc), *dy = w.take<X>(d.btc);
    X *dq = w.take<X>(d.btc), *dk = w.take<X>(d.btc), *dv = w.take<X>(d.btc);
    float* dP = w.take<float>(static_cast<size_t>(d.batch) * d.tt);
    X* dS = w.take<X>(static_cast<size_t>(d.batch) * d.tt);
    const X* P = static_cast<const X*>(att);
    permute_kernel<H, true><<<grid_for(d.btc), kThreads, 0, stream>>>(
        q, k, v, const_cast<X*>(static_cast<const X*>(qkv)), B, T, NH, d.hs, 3);
    permute_kernel<H, true><<<grid_for(d.btc), kThreads, 0, stream>>>(
        dy, nullptr, nullptr, const_cast<X*>(static_cast<const X*>(datty)), B, T, NH, d.hs, 1);
    check_launch("attention backward: permutes");
    // dV = P^T dO, then dP = dO V^T in fp32.
    s = heads_gemm(lt, column_major(false, true, d.hs, T, T, t, t, dy, d.hs, P, T, dv, d.hs), d.th, d.tt, d.th,
                   d.batch, 1.0f, stream);
    if (s.ok()) {
      s = heads_gemm(lt, column_major(true, false, T, T, d.hs, t, DType::kF32, v, d.hs, dy, d.hs, dP, T), d.th, d.th,
                     d.tt, d.batch, 1.0f, stream);
    }
    if (!s.ok()) return;
    softmax_backward_kernel<H><<<d.row_warps_blocks(T), kThreads, 0, stream>>>(dS, dP, P, int64_t{d.batch} * T, T,
                                                                               d.scale);
    check_launch("attention backward: softmax");
    // dQ = dS K, dK = dS^T Q.
    s = heads_gemm(lt, column_major(false, false, d.hs, T, T, t, t, k, d.hs, dS, T, dq, d.hs), d.th, d.tt, d.th,
                   d.batch, 1.0f, stream);
    if (s.ok()) {
      s = heads_gemm(lt, column_major(false, true, d.hs, T, T, t, t, q, d.hs, dS, T, dk, d.hs), d.th, d.tt, d.th,
                     d.batch, 1.0f, stream);
    }
    if (!s.ok()) return;
    permute_kernel<H, false><<<grid_for(d.btc), kThreads, 0, stream>>>(dq, dk, dv, static_cast<X*>(dqkv), B, T, NH,
                                                                        d.hs, 3);
    check_launch("attention backward: unpermute");
  });
  return s;
}

}  // namespace zt::cuda
