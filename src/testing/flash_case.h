// The flash attention tests' cases and bound, shared by the GPU test
// (kernels/cuda/flash_attention_test.cc) and the CPU emulation's
// (kernels/cuda/emulation/flash_emulation_test.cc), which run the same kernel source.
//
// The bound is the materialized path's (attention_test.cc), whose argument carries over:
// - fp32 part: each value is a chain of at most 4 sums of at most T + hs + 8 fp32 terms and a
//   few correctly rounded operations (exp2 within 2 ulp; the base-2 scaling adds one rounding
//   of the exponent), so 4 (T + hs + 16) 2^-24;
// - 16-bit part: P is rounded once before P V and dV, dS once before dQ and dK, D reads the
//   rounded output O (its error is within 2^-9 of the magnitude sum_j P_j dPm_j the reference
//   uses for dS), and each output rounds once: at most 4 chained roundings, so 8 u16;
// - f16 only, an absolute floor: below 2^-14 f16 is subnormal and a rounding errs by up to
//   2^-25 absolutely, not relatively. P and dS round so and reach an output through at most
//   T terms of at most max|x| (the scale is below 1), and the output rounds so itself:
//   2^-25 (1 + T max|x|), x over qkv and dO. (Seen on an H200: dqkv elements near 1e-5 off
//   by 3e-8, which the relative bound alone did not allow.)
// The shapes cover head sizes 16, 32 and 64, a T that is not a multiple of the 64-row tile,
// batch x head grids of several blocks, and both ways of the backward's dQ.
#pragma once

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "tensor/dtype.h"

namespace zt::testing {

struct FlashShape {
  int B, T, C, NH;
};

// The first three have the dQ kernel recompute dS; the last three, one per head size, are long
// enough for the backward to store its dS tiles in att (flash_attention_stores_ds).
inline std::vector<FlashShape> flash_shapes() {
  return {{2, 64, 64, 4}, {1, 200, 128, 2}, {2, 128, 64, 2}, {1, 300, 64, 1}, {1, 192, 64, 2}, {1, 128, 32, 2}};
}

// Random qkv (B, T, 3C), scaled by 1.5, and dO (B, T, C), normal, seeded by T.
struct FlashInputs {
  std::vector<float> qkv, dy;
};
inline FlashInputs flash_inputs(const FlashShape& s) {
  std::mt19937 rng(11 + s.T);
  std::normal_distribution<float> d(0.0f, 1.0f);
  FlashInputs in{std::vector<float>(static_cast<size_t>(s.B) * s.T * 3 * s.C),
                 std::vector<float>(static_cast<size_t>(s.B) * s.T * s.C)};
  for (float& x : in.qkv) x = 1.5f * d(rng);
  for (float& x : in.dy) x = d(rng);
  return in;
}

// The relative bound eps and the absolute floor above, for the inputs as rounded to t.
struct FlashBound {
  double eps, floor;
};
inline FlashBound flash_bound(DType t, const FlashShape& s, const std::vector<float>& qkv,
                              const std::vector<float>& dy) {
  const double u16 = t == DType::kBF16 ? std::ldexp(1.0, -9) : std::ldexp(1.0, -12);
  const double eps = 4.0 * (s.T + s.C / s.NH + 16) * std::ldexp(1.0, -24) + 8.0 * u16;
  double max_abs = 0.0;
  for (float x : qkv) max_abs = std::max(max_abs, std::fabs(static_cast<double>(x)));
  for (float x : dy) max_abs = std::max(max_abs, std::fabs(static_cast<double>(x)));
  return {eps, t == DType::kF16 ? std::ldexp(1.0, -25) * (1.0 + s.T * max_abs) : 0.0};
}

inline std::string flash_case_name(DType t, const FlashShape& s) {
  return std::string(dtype_name(t)) + " hs " + std::to_string(s.C / s.NH) + " T " + std::to_string(s.T);
}

}  // namespace zt::testing
