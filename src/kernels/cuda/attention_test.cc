// Materialized causal attention on the GPU against a double-precision reference computed
// on the host from the same (storage-representable) inputs. Each output element's error
// is bounded by eps times its magnitude: the same expression with every term replaced by
// its absolute value (sum_j P_ij |v_j| for y; likewise through dS for the gradients).
// eps, from the arithmetic:
// - fp32: every value is a chain of at most 4 sums of at most T + hs + 8 fp32 terms
//   (scores, softmax, products, the softmax backward's row sum) and a few correctly
//   rounded operations (exp within 2 ulp), so 4 (T + hs + 16) 2^-24 covers it;
// - bf16 / f16: the products read P, dS and the operands rounded to 16 bits once
//   (2^-9 / 2^-12 relative each), at most 4 such roundings chain into one output, and the
//   output rounds once more: 8 x 2^-9 (bf16), 8 x 2^-12 (f16), plus the fp32 term.
// The attention probabilities P saved in `att` are checked the same way (magnitude P).
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "kernels/cuda/attention.h"
#include "testing/attention_reference.h"
#include "testing/cuda_test.h"

namespace zt {
namespace {

using testing::DeviceArray;
using testing::DeviceValues;
using testing::expect_bounded;

TEST(CudaAttention, ForwardAndBackwardWithinTheRoundingBound) {
  ZT_REQUIRE_CUDA();
  const int B = 2, T = 64, C = 64, NH = 4;
  auto lt = cuda::LtGemm::create();
  ASSERT_TRUE(lt.ok()) << lt.status().to_string();
  std::mt19937 rng(9);
  std::normal_distribution<float> d(0.0f, 1.0f);
  std::vector<float> qkv(static_cast<size_t>(B) * T * 3 * C), dy(static_cast<size_t>(B) * T * C);
  for (float& x : qkv) x = d(rng);
  for (float& x : dy) x = d(rng);
  for (DType t : {DType::kF32, DType::kBF16, DType::kF16}) {
    DeviceValues in(t, qkv), dout(t, dy), y(t, std::vector<float>(dy.size()));
    DeviceValues att(t, std::vector<float>(static_cast<size_t>(B) * NH * T * T)), dqkv(t, std::vector<float>(qkv.size()));
    DeviceArray<char> ws(cuda::attention_workspace_bytes(t, B, T, C, NH));
    ASSERT_TRUE(cuda::attention_forward(**lt, t, y.get(), att.get(), in.get(), B, T, C, NH, ws.get(), nullptr).ok());
    ASSERT_TRUE(cuda::attention_backward(**lt, t, dqkv.get(), dout.get(), in.get(), att.get(), B, T, C, NH, ws.get(),
                                         nullptr).ok());
    const testing::AttentionReference r = testing::attention_reference(in.host(), dout.host(), B, T, C, NH);
    const double u16 = t == DType::kBF16 ? std::ldexp(1.0, -9) : t == DType::kF16 ? std::ldexp(1.0, -12) : 0.0;
    const double eps = 4.0 * (T + C / NH + 16) * std::ldexp(1.0, -24) + 8.0 * u16;
    expect_bounded(y.download(), r.y, r.ym, eps, std::string("y ") + dtype_name(t));
    expect_bounded(att.download(), r.p, r.p, eps, std::string("P ") + dtype_name(t));
    expect_bounded(dqkv.download(), r.dqkv, r.dqkvm, eps, std::string("dqkv ") + dtype_name(t));
  }
}

}  // namespace
}  // namespace zt
