// Device scalar math that reproduces the CPU's vector kernels bit for bit (kernels/cpu/
// simd/vmath.h and the AVX2/AVX-512 ISA structs): every operation is an explicitly
// rounded intrinsic (__fmul_rn, __fadd_rn, __fdiv_rn, __fsqrt_rn), so neither the
// compiler's FMA contraction nor fast math can change a result, and the CPU's fmadd
// (fused on AVX2/AVX-512) is __fmaf_rn. min/max keep the CPU's operand order, which
// decides what a NaN gives (x < b ? x : b returns b for NaN x, as _mm512_min_ps does).
// The scalar CPU ISA (ZT_ISA=scalar) does not fuse fmadd: kernels that use fmadd match
// the AVX paths, not that one (the CUDA tests say which they compare against).
#pragma once

#include <cstdint>

namespace zt::cuda {

__device__ __forceinline__ float vadd(float a, float b) { return __fadd_rn(a, b); }
__device__ __forceinline__ float vsub(float a, float b) { return __fsub_rn(a, b); }
__device__ __forceinline__ float vmul(float a, float b) { return __fmul_rn(a, b); }
__device__ __forceinline__ float vdiv(float a, float b) { return __fdiv_rn(a, b); }
__device__ __forceinline__ float vsqrt(float a) { return __fsqrt_rn(a); }
__device__ __forceinline__ float vfmadd(float a, float b, float c) { return __fmaf_rn(a, b, c); }
__device__ __forceinline__ float vmin(float a, float b) { return a < b ? a : b; }
__device__ __forceinline__ float vmax(float a, float b) { return a > b ? a : b; }

// 2^n for an integer-valued float n in [-126, 127].
__device__ __forceinline__ float pow2i(float n) {
  return __uint_as_float(static_cast<uint32_t>(__float2int_rn(n) + 127) << 23);
}

// The CPU's vexp: Cephes expf polynomial after range reduction by ln 2 in two constants;
// kFused: the AVX ISAs' fused fmadd (true) or the scalar ISA's two roundings.
template <bool kFused = true>
__device__ __forceinline__ float vexp(float x) {
  auto fm = [](float a, float b, float c) { return kFused ? vfmadd(a, b, c) : vadd(vmul(a, b), c); };
  x = vmin(x, 88.3762626647949f);
  x = vmax(x, -87.3365447505531f);
  const float n = rintf(vmul(x, 1.44269504088896341f));
  float r = fm(n, -0.693359375f, x);
  r = fm(n, 2.12194440e-4f, r);
  float p = 1.9875691500e-4f;
  p = fm(p, r, 1.3981999507e-3f);
  p = fm(p, r, 8.3334519073e-3f);
  p = fm(p, r, 4.1665795894e-2f);
  p = fm(p, r, 1.6666665459e-1f);
  p = fm(p, r, 5.0000001201e-1f);
  p = fm(p, vmul(r, r), vadd(r, 1.0f));
  const float half_n = rintf(vmul(n, 0.5f));
  return vmul(vmul(p, pow2i(half_n)), pow2i(vsub(n, half_n)));
}

}  // namespace zt::cuda
