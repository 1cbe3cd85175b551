// Accumulation and casts (elementwise.h): grid-stride loops over the bit conversions of
// half_bits.cuh.
#include "kernels/cuda/elementwise.h"

#include "core/check.h"
#include "kernels/cuda/half_bits.cuh"
#include "kernels/cuda/launch.h"
#include "kernels/cuda/pack.cuh"
#include "kernels/cuda/vmath.cuh"

namespace zt::cuda {

namespace {

__global__ void accumulate_kernel(float* dst, const float* src, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += int64_t{gridDim.x} * blockDim.x) {
    dst[i] = __fadd_rn(dst[i], src[i]);
  }
}

__global__ void scale_kernel(float* x, float c, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += int64_t{gridDim.x} * blockDim.x) {
    x[i] = __fmul_rn(x[i], c);
  }
}

template <class H>
__global__ void narrow_kernel(uint16_t* dst, const float* src, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += int64_t{gridDim.x} * blockDim.x) {
    dst[i] = H::store(src[i]);
  }
}

// Narrowing 8 floats (two fp32 packs) into one 16-bit pack per thread.
template <class H>
__global__ void narrow_packed(uint16_t* dst, const float* src, int64_t npacks) {
  for (int64_t p = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; p < npacks; p += int64_t{gridDim.x} * blockDim.x) {
    float v[8];
    load_pack<F32>(src + p * 8, v);
    load_pack<F32>(src + p * 8 + 4, v + 4);
    store_pack<H>(dst + p * 8, v);
  }
}

template <class H>
__global__ void widen_kernel(float* dst, const uint16_t* src, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += int64_t{gridDim.x} * blockDim.x) {
    dst[i] = H::load(src[i]);
  }
}

template <class H>
__global__ void bias_residual_kernel(typename H::T* out, const typename H::T* residual, const float* partial,
                                     const typename H::T* bias, int64_t N, int C) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < N * C; i += int64_t{gridDim.x} * blockDim.x) {
    const float x = vadd(H::load(residual[i]), partial[i]);
    out[i] = H::store(bias == nullptr ? x : vadd(x, H::load(bias[i % C])));
  }
}

}  // namespace

void bias_residual(DType t, void* out, const void* residual, const float* partial, const void* bias, int64_t N, int C,
                   cudaStream_t stream) {
  if (N * C <= 0) return;
  with_storage(t, [&](auto h) {
    using H = decltype(h);
    using X = typename H::T;
    bias_residual_kernel<H><<<grid_for(N * C), kThreads, 0, stream>>>(
        static_cast<X*>(out), static_cast<const X*>(residual), partial, static_cast<const X*>(bias), N, C);
  });
  check_launch("bias_residual");
}

void accumulate(float* dst, const float* src, int64_t n, cudaStream_t stream) {
  if (n <= 0) return;
  accumulate_kernel<<<grid_for(n), kThreads, 0, stream>>>(dst, src, n);
  check_launch("accumulate");
}

void scale(float* x, float c, int64_t n, cudaStream_t stream) {
  if (n <= 0) return;
  scale_kernel<<<grid_for(n), kThreads, 0, stream>>>(x, c, n);
  check_launch("scale");
}

void cast_from_f32(DType to, half_t* storage, const float* src, int64_t n, cudaStream_t stream) {
  ZT_CHECK(to != DType::kF32, "cast_from_f32 narrows to a 16-bit type");
  uint16_t* dst = bits_of(storage);
  if (n <= 0) return;
  const int64_t packs = aligned16(dst) && aligned16(src) ? n / 8 : 0, done = packs * 8;
  auto launch = [&](auto h) {
    using H = decltype(h);
    if (packs > 0) narrow_packed<H><<<grid_for(packs), kThreads, 0, stream>>>(dst, src, packs);
    if (done < n) narrow_kernel<H><<<grid_for(n - done), kThreads, 0, stream>>>(dst + done, src + done, n - done);
  };
  if (to == DType::kBF16) {
    launch(Bf16{});
  } else {
    launch(F16{});
  }
  check_launch("cast_from_f32");
}

void cast_to_f32(DType from, float* dst, const half_t* storage, int64_t n, cudaStream_t stream) {
  ZT_CHECK(from != DType::kF32, "cast_to_f32 widens a 16-bit type");
  const uint16_t* src = bits_of(storage);
  if (n <= 0) return;
  with_storage(from, [&](auto h) { widen_kernel<decltype(h)><<<grid_for(n), kThreads, 0, stream>>>(dst, src, n); });
  check_launch("cast_to_f32");
}

}  // namespace zt::cuda
