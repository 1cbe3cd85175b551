// The CPU's flash attention against the double reference (testing/attention_reference.h).
// Bound, from the arithmetic: every output is a chain of at most 4 fp32 sums (S = Q K^T,
// the row sum l, O = P V, then for the backward dP = dO V^T, D, and dQ/dK/dV) of at most
// T + hs + 8 terms, plus a few roundings per element (the vectorized exp within 2 ulp, the
// rescaling by exp(m_old - m_new) once per key tile, the division by l, the log-sum-exp and
// its subtraction): 4 (T + hs + 16 + T / 128) units of 2^-24 of each element's magnitude,
// the materialized path's bound plus one rounding per key tile for the rescaling. The
// 16-bit tables round their inputs (exact here: the inputs are representable), O (which D
// reads) and each output once: 8 u16 more, as the CUDA test argues.
// Shapes: a T that is one tile, one that spans several with a ragged last tile, several
// heads and batch elements. The same bits under 1 and 2 OpenMP threads.
#include "kernels/cpu/flash_attention.h"

#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "kernels/cpu/half_convert.h"
#include "kernels/cpu/half_ops.h"
#include "testing/attention_reference.h"

namespace zt {
namespace {

struct Shape {
  int B, T, C, NH;
};

std::vector<float> normal(size_t n, uint32_t seed, float sd) {
  std::mt19937 g(seed);
  std::normal_distribution<float> d(0.0f, sd);
  std::vector<float> v(n);
  for (float& x : v) x = d(g);
  return v;
}

struct Out {
  std::vector<float> y, lse, dqkv;
};

Out run_f32(const Shape& s, const std::vector<float>& qkv, const std::vector<float>& dy) {
  Out o;
  o.y.resize(static_cast<size_t>(s.B) * s.T * s.C);
  o.lse.resize(static_cast<size_t>(s.B) * s.NH * s.T);
  o.dqkv.resize(qkv.size());
  flash_attention_forward(o.y.data(), o.lse.data(), qkv.data(), s.B, s.T, s.C, s.NH);
  flash_attention_backward(o.dqkv.data(), dy.data(), qkv.data(), o.y.data(), o.lse.data(), s.B, s.T, s.C, s.NH);
  return o;
}

TEST(CpuFlashAttention, WithinTheRoundingBoundOfTheDoubleReference) {
  for (const Shape& s : {Shape{2, 64, 32, 2}, Shape{1, 300, 48, 3}, Shape{3, 129, 16, 1}}) {
    const std::vector<float> qkv = normal(static_cast<size_t>(s.B) * s.T * 3 * s.C, 11, 1.0f);
    const std::vector<float> dy = normal(static_cast<size_t>(s.B) * s.T * s.C, 12, 1.0f);
    const testing::AttentionReference r = testing::attention_reference(qkv, dy, s.B, s.T, s.C, s.NH);
    const Out o = run_f32(s, qkv, dy);
    const double eps = 4.0 * (s.T + s.C / s.NH + 16 + s.T / 128) * std::ldexp(1.0, -24);
    const std::string what = "T=" + std::to_string(s.T) + " hs=" + std::to_string(s.C / s.NH);
    testing::expect_bounded(o.y, r.y, r.ym, eps, "y " + what);
    testing::expect_bounded(o.dqkv, r.dqkv, r.dqkvm, eps, "dqkv " + what);
    omp_set_num_threads(1);
    const Out one = run_f32(s, qkv, dy);
    omp_set_num_threads(2);
    EXPECT_EQ(one.y, o.y) << what;
    EXPECT_EQ(one.dqkv, o.dqkv) << what;
  }
}

// The bf16 and f16 tables: the fp32 kernel on widened inputs, each output rounded once.
TEST(CpuFlashAttention, SixteenBitTablesWithinTheirBound) {
  const Shape s{2, 150, 32, 2};
  for (DType t : {DType::kBF16, DType::kF16}) {
    const ActivationOps<half_t>& ops = cpu_half_ops(t);
    std::vector<float> qkv = normal(static_cast<size_t>(s.B) * s.T * 3 * s.C, 21, 1.0f);
    std::vector<float> dy = normal(static_cast<size_t>(s.B) * s.T * s.C, 22, 1.0f);
    std::vector<half_t> hq(qkv.size()), hdy(dy.size()), hy(dy.size()), hdq(qkv.size());
    f32_to_half(t, hq.data(), qkv.data(), static_cast<int64_t>(qkv.size()));
    f32_to_half(t, hdy.data(), dy.data(), static_cast<int64_t>(dy.size()));
    half_to_f32(t, qkv.data(), hq.data(), static_cast<int64_t>(qkv.size()));  // the representable inputs
    half_to_f32(t, dy.data(), hdy.data(), static_cast<int64_t>(dy.size()));
    std::vector<float> lse(static_cast<size_t>(s.B) * s.NH * s.T), y(dy.size()), dq(qkv.size());
    ops.flash_attention_forward(hy.data(), lse.data(), hq.data(), s.B, s.T, s.C, s.NH);
    ops.flash_attention_backward(hdq.data(), hdy.data(), hq.data(), hy.data(), lse.data(), s.B, s.T, s.C, s.NH);
    half_to_f32(t, y.data(), hy.data(), static_cast<int64_t>(y.size()));
    half_to_f32(t, dq.data(), hdq.data(), static_cast<int64_t>(dq.size()));
    const testing::AttentionReference r = testing::attention_reference(qkv, dy, s.B, s.T, s.C, s.NH);
    const double u16 = t == DType::kBF16 ? std::ldexp(1.0, -8) : std::ldexp(1.0, -11);
    const double eps = 4.0 * (s.T + s.C / s.NH + 16 + 2) * std::ldexp(1.0, -24) + 8.0 * u16;
    const double floor = t == DType::kF16 ? std::ldexp(1.0, -25) * (1.0 + s.T * 5.0) : 0.0;  // f16 subnormals
    testing::expect_bounded(y, r.y, r.ym, eps, std::string("y ") + dtype_name(t), floor);
    testing::expect_bounded(dq, r.dqkv, r.dqkvm, eps, std::string("dqkv ") + dtype_name(t), floor);
  }
}

}  // namespace
}  // namespace zt
