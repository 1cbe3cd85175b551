// Device helpers for kernels that reproduce a CPU kernel's order (cpu_order.h): a group
// of W consecutive threads plays one row's W vector lanes. Each lane accumulates its
// elements in order (element i of the row belongs to lane i % W, as in the CPU's vector
// loop; lanes beyond a row's tail simply add nothing, which equals the CPU adding its
// zero padding); group_sum then applies the CPU's reduce_add tree (for W = 16: the two
// 8-lane halves, then 4, 2, 1, as IsaAvx512::reduce_add's extract/movehl/movehdup).
#pragma once

#include "kernels/cuda/cpu_order.h"
#include "kernels/cuda/half_bits.cuh"
#include "kernels/cuda/vmath.cuh"

namespace zt::cuda {

// a * b + c with the CPU's fmadd: fused (one rounding) or not.
template <bool kFused>
__device__ __forceinline__ float madd(float a, float b, float c) {
  return kFused ? vfmadd(a, b, c) : vadd(vmul(a, b), c);
}

// The lanes' sum by the CPU's halving tree; every lane of the group gets the result.
// REQUIRES: all 32 lanes of the warp call it (groups of W tile the warp).
template <int W>
__device__ __forceinline__ float group_sum(float v) {
#pragma unroll
  for (int off = W / 2; off >= 1; off /= 2) v = vadd(v, __shfl_down_sync(0xffffffffu, v, off, W));
  return __shfl_sync(0xffffffffu, v, 0, W);
}

// The lanes' maximum (the order does not matter for max of non-NaN values).
template <int W>
__device__ __forceinline__ float group_max(float v) {
#pragma unroll
  for (int off = W / 2; off >= 1; off /= 2) v = vmax(v, __shfl_down_sync(0xffffffffu, v, off, W));
  return __shfl_sync(0xffffffffu, v, 0, W);
}

// Calls f(std::integral_constant-like W, kFused) for the order: one dispatch for every
// lane-order kernel template.
template <int W, bool F>
struct Order {
  static constexpr int kWidth = W;
  static constexpr bool kFused = F;
};

template <class Fn>
void with_order(CpuOrder o, Fn&& f) {
  if (o.width == 16) {
    f(Order<16, true>{});
  } else if (o.fused) {
    f(Order<8, true>{});
  } else {
    f(Order<8, false>{});
  }
}

// with_order and with_storage (half_bits.cuh) at once: f(order tag, storage tag).
template <class Fn>
void with_order_storage(CpuOrder o, DType t, Fn&& f) {
  with_order(o, [&](auto ord) { with_storage(t, [&](auto h) { f(ord, h); }); });
}

}  // namespace zt::cuda
