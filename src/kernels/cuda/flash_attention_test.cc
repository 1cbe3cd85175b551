// Flash attention on the GPU against the double reference (attention_reference.h), with the
// bound of the materialized path's test (attention_test.cc), whose argument carries over:
// - fp32 part: each value is a chain of at most 4 sums of at most T + hs + 8 fp32 terms and a
//   few correctly rounded operations (exp2 within 2 ulp; the base-2 scaling adds one rounding
//   of the exponent), so 4 (T + hs + 16) 2^-24;
// - 16-bit part: P is rounded once before P V and dV, dS once before dQ and dK, D reads the
//   rounded output O (its error is within 2^-9 of the magnitude sum_j P_j dPm_j the reference
//   uses for dS), and each output rounds once: at most 4 chained roundings, so 8 u16 as there;
// - f16 only, an absolute floor: below 2^-14 f16 is subnormal and a rounding errs by up to
//   2^-25 absolutely, not relatively. P and dS round so and reach an output through at most
//   T terms of at most max|x| (the scale is below 1), and the output rounds so itself:
//   2^-25 (1 + T max|x|), x over qkv and dO. (Seen on an H200: dqkv elements near 1e-5 off
//   by 3e-8, which the relative bound alone did not allow.)
// Shapes cover head sizes 16, 32 and 64, a T that is not a multiple of the 64-row tile, and
// batch x head grids of several blocks. Two runs give the same bits (no atomics).
#include "kernels/cuda/flash_attention.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "testing/attention_reference.h"
#include "testing/cuda_test.h"

namespace zt {
namespace {

using testing::DeviceArray;
using testing::DeviceValues;

struct Shape {
  int B, T, C, NH;
};

struct FlashRun {
  std::vector<float> y, dqkv;
};

FlashRun run_flash(DType t, DeviceValues& in, DeviceValues& dout, const Shape& s) {
  DeviceValues y(t, std::vector<float>(static_cast<size_t>(s.B) * s.T * s.C));
  DeviceValues att(t, std::vector<float>(static_cast<size_t>(s.B) * s.NH * s.T * s.T));
  DeviceValues dqkv(t, std::vector<float>(in.host().size()));
  DeviceArray<char> ws(cuda::flash_attention_workspace_bytes(s.B, s.T, s.NH));
  EXPECT_TRUE(cuda::flash_attention_forward(t, y.get(), att.get(), in.get(), s.B, s.T, s.C, s.NH, nullptr).ok());
  EXPECT_TRUE(cuda::flash_attention_backward(t, dqkv.get(), dout.get(), in.get(), att.get(), s.B, s.T, s.C, s.NH,
                                             ws.get(), nullptr)
                  .ok());
  return {y.download(), dqkv.download()};
}

TEST(CudaFlashAttention, ForwardAndBackwardWithinTheRoundingBoundAndDeterministic) {
  ZT_REQUIRE_CUDA();
  for (const Shape& s : {Shape{2, 64, 64, 4}, Shape{1, 200, 128, 2}, Shape{2, 128, 64, 2}}) {
    std::mt19937 rng(11 + s.T);
    std::normal_distribution<float> d(0.0f, 1.0f);
    std::vector<float> qkv(static_cast<size_t>(s.B) * s.T * 3 * s.C), dy(static_cast<size_t>(s.B) * s.T * s.C);
    for (float& x : qkv) x = 1.5f * d(rng);
    for (float& x : dy) x = d(rng);
    for (DType t : {DType::kBF16, DType::kF16}) {
      ASSERT_TRUE(cuda::flash_attention_serves(t, s.T, s.C, s.NH));
      DeviceValues in(t, qkv), dout(t, dy);
      const FlashRun a = run_flash(t, in, dout, s), b = run_flash(t, in, dout, s);
      const testing::AttentionReference r = testing::attention_reference(in.host(), dout.host(), s.B, s.T, s.C, s.NH);
      const double u16 = t == DType::kBF16 ? std::ldexp(1.0, -9) : std::ldexp(1.0, -12);
      const double eps = 4.0 * (s.T + s.C / s.NH + 16) * std::ldexp(1.0, -24) + 8.0 * u16;
      double max_abs = 0.0;
      for (float x : in.host()) max_abs = std::max(max_abs, std::fabs(static_cast<double>(x)));
      for (float x : dout.host()) max_abs = std::max(max_abs, std::fabs(static_cast<double>(x)));
      const double floor = t == DType::kF16 ? std::ldexp(1.0, -25) * (1.0 + s.T * max_abs) : 0.0;
      const std::string what = std::string(dtype_name(t)) + " hs " + std::to_string(s.C / s.NH) + " T " +
                               std::to_string(s.T);
      testing::expect_bounded(a.y, r.y, r.ym, eps, "flash y " + what, floor);
      testing::expect_bounded(a.dqkv, r.dqkv, r.dqkvm, eps, "flash dqkv " + what, floor);
      EXPECT_TRUE(testing::same_bits(a.y, b.y)) << what;
      EXPECT_TRUE(testing::same_bits(a.dqkv, b.dqkv)) << what;
    }
  }
}

TEST(CudaFlashAttention, ServesSixteenBitHeadSizesUpTo64WhenTheStateFits) {
  EXPECT_TRUE(cuda::flash_attention_serves(DType::kBF16, 1024, 768, 12));  // GPT-2 124M
  EXPECT_TRUE(cuda::flash_attention_serves(DType::kF16, 1024, 768, 12));
  EXPECT_FALSE(cuda::flash_attention_serves(DType::kF32, 1024, 768, 12));    // fp32: materialized
  EXPECT_FALSE(cuda::flash_attention_serves(DType::kBF16, 1024, 4096, 32));  // head size 128
  EXPECT_FALSE(cuda::flash_attention_serves(DType::kBF16, 16, 64, 4));       // O's copy does not fit in att
}

}  // namespace
}  // namespace zt
