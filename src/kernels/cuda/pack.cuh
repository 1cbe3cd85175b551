// 16-byte packs for memory-bound elementwise kernels: 8 16-bit or 4 fp32 elements moved by
// one vector load or store (the fastest width of the memory path), widened to floats in
// registers. Callers take the packed path only when every pointer is 16-byte aligned, and
// run the remaining tail elements one by one.
#pragma once

#include <cstdint>

#include "kernels/cuda/half_bits.cuh"

namespace zt::cuda {

template <class H>
constexpr int kPack = 16 / static_cast<int>(sizeof(typename H::T));

template <class H>
__device__ __forceinline__ void load_pack(const typename H::T* p, float* v) {
  const uint4 raw = *reinterpret_cast<const uint4*>(p);
  const typename H::T* e = reinterpret_cast<const typename H::T*>(&raw);
#pragma unroll
  for (int k = 0; k < kPack<H>; ++k) v[k] = H::load(e[k]);
}

template <class H>
__device__ __forceinline__ void store_pack(typename H::T* p, const float* v) {
  uint4 raw;
  typename H::T* e = reinterpret_cast<typename H::T*>(&raw);
#pragma unroll
  for (int k = 0; k < kPack<H>; ++k) e[k] = H::store(v[k]);
  *reinterpret_cast<uint4*>(p) = raw;
}

__host__ __device__ inline bool aligned16(const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15) == 0; }

}  // namespace zt::cuda
