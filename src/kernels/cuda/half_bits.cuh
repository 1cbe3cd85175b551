// The storage tags of zerotrain's CUDA kernels: each kernel template reads and writes its
// activations through one of these, so one template serves the fp32 table (F32, the
// identity) and both 16-bit ones (Bf16, F16: core/half_bits.h's conversions, the very
// functions the CPU kernels use, hence the same bits).
#pragma once

#include <cstdint>

#include "tensor/dtype.h"
#include "core/half_bits.h"

namespace zt::cuda {

struct F32 {
  using T = float;
  __device__ __forceinline__ static float load(float x) { return x; }
  __device__ __forceinline__ static float store(float x) { return x; }
};
struct Bf16 {
  using T = uint16_t;
  __device__ __forceinline__ static float load(uint16_t x) { return bf16_bits_to_f32(x); }
  __device__ __forceinline__ static uint16_t store(float x) { return f32_to_bf16_bits(x); }
};
struct F16 {
  using T = uint16_t;
  __device__ __forceinline__ static float load(uint16_t x) { return f16_bits_to_f32(x); }
  __device__ __forceinline__ static uint16_t store(float x) { return f32_to_f16_bits(x); }
};

// Calls f(tag) with the storage tag of t (F32, Bf16 or F16): one dispatch for every
// kernel template.
template <class F>
void with_storage(DType t, F&& f) {
  if (t == DType::kF32) {
    f(F32{});
  } else if (t == DType::kBF16) {
    f(Bf16{});
  } else {
    f(F16{});
  }
}

}  // namespace zt::cuda
