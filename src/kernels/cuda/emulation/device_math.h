// The CUDA device math intrinsics that zerotrain's kernels use (vmath.cuh), as host functions
// for the CPU emulation (cuda_keywords.h includes this): each is the IEEE operation it names,
// rounded to nearest even, which is what the host's float arithmetic gives (the build does
// not contract a * b + c: -ffp-contract=off). Global names, as the device's are.
#pragma once

#include <cmath>
#include <cstdint>

#include "core/half_bits.h"

inline float __fadd_rn(float a, float b) { return a + b; }
inline float __fsub_rn(float a, float b) { return a - b; }
inline float __fmul_rn(float a, float b) { return a * b; }
inline float __fdiv_rn(float a, float b) { return a / b; }
inline float __fsqrt_rn(float a) { return std::sqrt(a); }
inline float __fmaf_rn(float a, float b, float c) { return std::fma(a, b, c); }
inline int __float2int_rn(float x) { return static_cast<int>(std::lrint(x)); }
inline float __uint_as_float(uint32_t u) { return zt::bits_float(u); }
