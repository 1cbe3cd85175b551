// The materialized attention at GPT-2's head shape (T = 128, head size 64, the GEMM
// libraries' blocked paths rather than the tiny shapes of the gradient checks): its bits do
// not depend on the thread count (the per-head GEMMs take the same library in a team of
// one), and the 16-bit tables, which widen each head's slices into dense scratch, give bit
// for bit the fp32 kernel's results on the widened inputs, rounded once.
#include "kernels/cpu/attention.h"

#include <gtest/gtest.h>
#include <omp.h>

#include <cstdint>
#include <vector>

#include "kernels/cpu/half_ops.h"
#include "testing/half_values.h"

namespace zt {
namespace {

constexpr int B = 2, T = 128, C = 192, NH = 3;  // head size 64
constexpr int64_t kQkv = int64_t{B} * T * 3 * C, kY = int64_t{B} * T * C, kAtt = int64_t{B} * NH * T * T;

struct Outputs {
  std::vector<float> y, att, dqkv;
};

Outputs fp32(const std::vector<float>& qkv, const std::vector<float>& dy) {
  Outputs r{std::vector<float>(kY), std::vector<float>(kAtt), std::vector<float>(kQkv)};
  attention_forward(r.y.data(), r.att.data(), qkv.data(), B, T, C, NH);
  attention_backward(r.dqkv.data(), dy.data(), qkv.data(), r.att.data(), B, T, C, NH);
  return r;
}

TEST(CpuAttention, BitsDoNotDependOnTheThreadCount) {
  const std::vector<float> qkv = testing::random_vector(kQkv, 1, 2.0f), dy = testing::random_vector(kY, 2);
  const Outputs two = fp32(qkv, dy);
  const int threads = omp_get_max_threads();
  omp_set_num_threads(1);
  const Outputs one = fp32(qkv, dy);
  omp_set_num_threads(threads);
  testing::expect_same_bits(one.y, two.y, "y");
  testing::expect_same_bits(one.att, two.att, "att");
  testing::expect_same_bits(one.dqkv, two.dqkv, "dqkv");
}

TEST(CpuAttention, SixteenBitTablesAreTheRoundedFp32KernelAtAFullHead) {
  for (DType d : {DType::kBF16, DType::kF16}) {
    const testing::HalfValues qkv = testing::random_half(d, kQkv, 3, 2.0f), dy = testing::random_half(d, kY, 4);
    std::vector<float> att_ref(kAtt), y_ref(kY), dqkv_ref(kQkv);
    attention_forward(y_ref.data(), att_ref.data(), qkv.f.data(), B, T, C, NH);
    const testing::Halves att16 = testing::narrow(d, att_ref);
    attention_backward(dqkv_ref.data(), dy.f.data(), qkv.f.data(), testing::widen(d, att16).data(), B, T, C, NH);
    testing::Halves y(kY), att(kAtt), dqkv(kQkv);
    cpu_half_ops(d).attention_forward(y.data(), att.data(), qkv.h.data(), B, T, C, NH);
    cpu_half_ops(d).attention_backward(dqkv.data(), dy.h.data(), qkv.h.data(), att.data(), B, T, C, NH);
    testing::expect_same_bits(y, testing::narrow(d, y_ref), "y");
    testing::expect_same_bits(att, att16, "att");
    testing::expect_same_bits(dqkv, testing::narrow(d, dqkv_ref), "dqkv");
  }
}

}  // namespace
}  // namespace zt
