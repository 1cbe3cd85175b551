// Accumulation and casts (elementwise.h): grid-stride loops over the bit conversions of
// half_bits.cuh.
#include "kernels/cuda/elementwise.h"

#include "core/check.h"
#include "kernels/cuda/half_bits.cuh"
#include "kernels/cuda/launch.h"

namespace zt::cuda {

namespace {

__global__ void accumulate_kernel(float* dst, const float* src, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += int64_t{gridDim.x} * blockDim.x) {
    dst[i] = __fadd_rn(dst[i], src[i]);
  }
}

template <class H>
__global__ void narrow_kernel(uint16_t* dst, const float* src, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += int64_t{gridDim.x} * blockDim.x) {
    dst[i] = H::store(src[i]);
  }
}

template <class H>
__global__ void widen_kernel(float* dst, const uint16_t* src, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += int64_t{gridDim.x} * blockDim.x) {
    dst[i] = H::load(src[i]);
  }
}

}  // namespace

void accumulate(float* dst, const float* src, int64_t n, cudaStream_t stream) {
  if (n <= 0) return;
  accumulate_kernel<<<grid_for(n), kThreads, 0, stream>>>(dst, src, n);
  check_launch("accumulate");
}

void cast_from_f32(DType to, uint16_t* dst, const float* src, int64_t n, cudaStream_t stream) {
  ZT_CHECK(to != DType::kF32, "cast_from_f32 narrows to a 16-bit type");
  if (n <= 0) return;
  with_storage(to, [&](auto h) { narrow_kernel<decltype(h)><<<grid_for(n), kThreads, 0, stream>>>(dst, src, n); });
  check_launch("cast_from_f32");
}

void cast_to_f32(DType from, float* dst, const uint16_t* src, int64_t n, cudaStream_t stream) {
  ZT_CHECK(from != DType::kF32, "cast_to_f32 widens a 16-bit type");
  if (n <= 0) return;
  with_storage(from, [&](auto h) { widen_kernel<decltype(h)><<<grid_for(n), kThreads, 0, stream>>>(dst, src, n); });
  check_launch("cast_to_f32");
}

}  // namespace zt::cuda
