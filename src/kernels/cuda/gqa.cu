// gqa_pack / gqa_unpack (gqa.h): one thread per output element.
#include "kernels/cuda/gqa.h"

#include "kernels/cuda/half_bits.cuh"
#include "kernels/cuda/launch.h"
#include "kernels/cuda/vmath.cuh"

namespace zt::cuda {

namespace {

template <class H>
__global__ void pack_kernel(typename H::T* qkv, const typename H::T* q, const typename H::T* k,
                            const typename H::T* v, int64_t BT, int NH, int NKV, int HD) {
  const int64_t C = static_cast<int64_t>(NH) * HD, KV = static_cast<int64_t>(NKV) * HD;
  const int rep = NH / NKV;
  for (int64_t e = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; e < BT * 3 * C; e += int64_t{gridDim.x} * blockDim.x) {
    const int64_t i = e / (3 * C), j = e % (3 * C);
    const int part = static_cast<int>(j / C);
    const int64_t c = j % C;
    if (part == 0) {
      qkv[e] = q[i * C + c];
    } else {
      const int64_t src = i * KV + (c / HD / rep) * HD + c % HD;  // query head c / HD reads kv head (c / HD) / rep
      qkv[e] = part == 1 ? k[src] : v[src];
    }
  }
}

template <class H>
__global__ void unpack_kernel(typename H::T* dq, typename H::T* dk, typename H::T* dv, const typename H::T* dqkv,
                              int64_t BT, int NH, int NKV, int HD) {
  const int64_t C = static_cast<int64_t>(NH) * HD, KV = static_cast<int64_t>(NKV) * HD;
  const int rep = NH / NKV;
  for (int64_t e = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; e < BT * (C + KV);
       e += int64_t{gridDim.x} * blockDim.x) {
    const int64_t i = e / (C + KV), j = e % (C + KV);
    const typename H::T* row = dqkv + i * 3 * C;
    if (j < C) {
      dq[i * C + j] = row[j];
      continue;
    }
    const int64_t kv = j - C;  // (g, e) of the kv heads
    const int64_t g = kv / HD, d = kv % HD;
    float sk = 0.0f, sv = 0.0f;
    for (int r = 0; r < rep; ++r) {
      sk = vadd(sk, H::load(row[C + (g * rep + r) * HD + d]));
      sv = vadd(sv, H::load(row[2 * C + (g * rep + r) * HD + d]));
    }
    dk[i * KV + kv] = H::store(sk);
    dv[i * KV + kv] = H::store(sv);
  }
}

}  // namespace

void gqa_pack(DType t, void* qkv, const void* q, const void* k, const void* v, int64_t BT, int NH, int NKV, int HD,
              cudaStream_t stream) {
  with_storage(t, [&](auto h) {
    using H = decltype(h);
    using X = typename H::T;
    pack_kernel<H><<<grid_for(BT * 3 * NH * HD), kThreads, 0, stream>>>(
        static_cast<X*>(qkv), static_cast<const X*>(q), static_cast<const X*>(k), static_cast<const X*>(v), BT, NH,
        NKV, HD);
  });
  check_launch("gqa_pack");
}

void gqa_unpack(DType t, void* dq, void* dk, void* dv, const void* dqkv, int64_t BT, int NH, int NKV, int HD,
                cudaStream_t stream) {
  with_storage(t, [&](auto h) {
    using H = decltype(h);
    using X = typename H::T;
    unpack_kernel<H><<<grid_for(BT * (NH + NKV) * HD), kThreads, 0, stream>>>(
        static_cast<X*>(dq), static_cast<X*>(dk), static_cast<X*>(dv), static_cast<const X*>(dqkv), BT, NH, NKV, HD);
  });
  check_launch("gqa_unpack");
}

}  // namespace zt::cuda
