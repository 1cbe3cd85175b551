// fill_uniform (fill.h): splitmix64 of (seed, i), the top 24 bits as a fraction.
#include "kernels/cuda/fill.h"

#include "kernels/cuda/half_bits.cuh"
#include "kernels/cuda/launch.h"

namespace zt::cuda {

namespace {

__host__ __device__ inline float hash_value(uint64_t seed, int64_t i, float scale) {
  uint64_t z = seed * 0x9e3779b97f4a7c15ull + static_cast<uint64_t>(i) + 0x632be59bd9b4e019ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  const float unit = static_cast<float>(z >> 40) * (1.0f / 16777216.0f);  // [0, 1), exact
  return (2.0f * unit - 1.0f) * scale;
}

template <class H>
__global__ void fill_kernel(typename H::T* dst, int64_t n, uint64_t seed, float scale) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += int64_t{gridDim.x} * blockDim.x) {
    dst[i] = H::store(hash_value(seed, i, scale));
  }
}

}  // namespace

void fill_uniform(DType t, void* dst, int64_t n, uint64_t seed, float scale, cudaStream_t stream) {
  if (n <= 0) return;
  with_storage(t, [&](auto h) {
    using H = decltype(h);
    fill_kernel<H><<<grid_for(n), kThreads, 0, stream>>>(static_cast<typename H::T*>(dst), n, seed, scale);
  });
  check_launch("fill_uniform");
}

float uniform_value(uint64_t seed, int64_t i, float scale) { return hash_value(seed, i, scale); }

}  // namespace zt::cuda
