// GELU and SwiGLU kernels (activation.h): the CPU's formulas (gelu_impl.h, swiglu_impl.h)
// in vmath.cuh's explicitly rounded operations, templated on the storage tag.
#include "kernels/cuda/activation.h"

#include "kernels/cuda/half_bits.cuh"
#include "kernels/cuda/launch.h"
#include "kernels/cuda/pack.cuh"
#include "kernels/cuda/vmath.cuh"

namespace zt::cuda {

namespace {

// sigmoid(2u) = 1 / (1 + exp(-2u)), u = sqrt(2/pi) (x + 0.044715 x^3) as fmadd(0.044715 x2, x, x).
__device__ __forceinline__ float gelu_sigmoid(float x, float x2) {
  const float u = vmul(0.7978845608028654f, vfmadd(vmul(0.044715f, x2), x, x));
  const float e = vexp<true>(vmul(-2.0f, u));
  return vdiv(1.0f, vadd(1.0f, e));
}

__device__ __forceinline__ float gelu_value(float x) { return vmul(x, gelu_sigmoid(x, vmul(x, x))); }

__device__ __forceinline__ float gelu_grad(float x, float dy) {
  const float x2 = vmul(x, x);
  const float s = gelu_sigmoid(x, x2);
  const float du = vmul(0.7978845608028654f, vfmadd(3.0f * 0.044715f, x2, 1.0f));
  const float ds = vmul(vmul(2.0f, vmul(s, vsub(1.0f, s))), du);
  return vmul(vfmadd(x, ds, s), dy);
}

__device__ __forceinline__ float silu_sigmoid(float g) { return vdiv(1.0f, vadd(1.0f, vexp<true>(vsub(0.0f, g)))); }

#define ZT_GRID_STRIDE(i, n) \
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < (n); i += int64_t{gridDim.x} * blockDim.x)

template <class H>
__global__ void gelu_forward_kernel(typename H::T* out, const typename H::T* inp, int64_t n) {
  ZT_GRID_STRIDE(i, n) out[i] = H::store(gelu_value(H::load(inp[i])));
}

template <class H>
__global__ void gelu_backward_kernel(typename H::T* dinp, const typename H::T* inp, const typename H::T* dout,
                                     int64_t n) {
  ZT_GRID_STRIDE(i, n) dinp[i] = H::store(gelu_grad(H::load(inp[i]), H::load(dout[i])));
}

template <class H>
__global__ void swiglu_forward_kernel(typename H::T* out, const typename H::T* gate, const typename H::T* up,
                                      int64_t n) {
  ZT_GRID_STRIDE(i, n) {
    const float g = H::load(gate[i]);
    out[i] = H::store(vmul(vmul(g, silu_sigmoid(g)), H::load(up[i])));
  }
}

// Every input is read before either output is written (the aliasing contract).
template <class H>
__global__ void swiglu_backward_kernel(typename H::T* dgate, typename H::T* dup, const typename H::T* dout,
                                       const typename H::T* gate, const typename H::T* up, int64_t n) {
  ZT_GRID_STRIDE(i, n) {
    const float dy = H::load(dout[i]), g = H::load(gate[i]), u = H::load(up[i]);
    const float s = silu_sigmoid(g);
    const float dsilu = vmul(s, vfmadd(g, vsub(1.0f, s), 1.0f));
    const float dg = vmul(vmul(dy, u), dsilu);
    const float du = vmul(dy, vmul(g, s));
    dgate[i] = H::store(dg);
    dup[i] = H::store(du);
  }
}

// The packed forms: thread t handles elements [t K, t K + K) of the first npacks K.
template <class H>
__global__ void gelu_forward_packed(typename H::T* out, const typename H::T* inp, int64_t npacks) {
  constexpr int K = kPack<H>;
  ZT_GRID_STRIDE(p, npacks) {
    float v[K];
    load_pack<H>(inp + p * K, v);
#pragma unroll
    for (int k = 0; k < K; ++k) v[k] = gelu_value(v[k]);
    store_pack<H>(out + p * K, v);
  }
}

template <class H>
__global__ void gelu_backward_packed(typename H::T* dinp, const typename H::T* inp, const typename H::T* dout,
                                     int64_t npacks) {
  constexpr int K = kPack<H>;
  ZT_GRID_STRIDE(p, npacks) {
    float x[K], d[K];
    load_pack<H>(inp + p * K, x);
    load_pack<H>(dout + p * K, d);
#pragma unroll
    for (int k = 0; k < K; ++k) d[k] = gelu_grad(x[k], d[k]);
    store_pack<H>(dinp + p * K, d);
  }
}

#undef ZT_GRID_STRIDE

}  // namespace

void gelu_forward(DType t, void* out, const void* inp, int64_t n, cudaStream_t stream) {
  if (n <= 0) return;
  with_storage(t, [&](auto h) {
    using H = decltype(h);
    using T = typename H::T;
    const int64_t packs = aligned16(out) && aligned16(inp) ? n / kPack<H> : 0, done = packs * kPack<H>;
    if (packs > 0) {
      gelu_forward_packed<H><<<grid_for(packs), kThreads, 0, stream>>>(static_cast<T*>(out), static_cast<const T*>(inp),
                                                                       packs);
    }
    if (done < n) {
      gelu_forward_kernel<H><<<grid_for(n - done), kThreads, 0, stream>>>(static_cast<T*>(out) + done,
                                                                          static_cast<const T*>(inp) + done, n - done);
    }
  });
  check_launch("gelu_forward");
}

void gelu_backward(DType t, void* dinp, const void* inp, const void* dout, int64_t n, cudaStream_t stream) {
  if (n <= 0) return;
  with_storage(t, [&](auto h) {
    using H = decltype(h);
    using T = typename H::T;
    const int64_t packs = aligned16(dinp) && aligned16(inp) && aligned16(dout) ? n / kPack<H> : 0;
    const int64_t done = packs * kPack<H>;
    if (packs > 0) {
      gelu_backward_packed<H><<<grid_for(packs), kThreads, 0, stream>>>(
          static_cast<T*>(dinp), static_cast<const T*>(inp), static_cast<const T*>(dout), packs);
    }
    if (done < n) {
      gelu_backward_kernel<H><<<grid_for(n - done), kThreads, 0, stream>>>(
          static_cast<T*>(dinp) + done, static_cast<const T*>(inp) + done, static_cast<const T*>(dout) + done, n - done);
    }
  });
  check_launch("gelu_backward");
}

void swiglu_forward(DType t, void* out, const void* gate, const void* up, int64_t n, cudaStream_t stream) {
  if (n <= 0) return;
  with_storage(t, [&](auto h) {
    using H = decltype(h);
    using T = typename H::T;
    swiglu_forward_kernel<H><<<grid_for(n), kThreads, 0, stream>>>(static_cast<T*>(out), static_cast<const T*>(gate),
                                                                    static_cast<const T*>(up), n);
  });
  check_launch("swiglu_forward");
}

void swiglu_backward(DType t, void* dgate, void* dup, const void* dout, const void* gate, const void* up, int64_t n,
                     cudaStream_t stream) {
  if (n <= 0) return;
  with_storage(t, [&](auto h) {
    using H = decltype(h);
    using T = typename H::T;
    swiglu_backward_kernel<H><<<grid_for(n), kThreads, 0, stream>>>(
        static_cast<T*>(dgate), static_cast<T*>(dup), static_cast<const T*>(dout), static_cast<const T*>(gate),
        static_cast<const T*>(up), n);
  });
  check_launch("swiglu_backward");
}

}  // namespace zt::cuda
