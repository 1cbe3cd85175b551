// cuBLASLt GEMMs against exact products computed in double on the host, within bounds
// from an error argument rather than from observed noise:
// - every product of two bf16 / f16 / fp32-rounded-to-24-bit values is exact in fp32 for
//   16-bit inputs; cuBLASLt sums K products (plus the residual and the bias) in fp32 in
//   some order, so the sum is within gamma = (K + 2) 2^-24 of sum |terms| (Higham's
//   bound for recursive summation in any order, fp32 unit roundoff 2^-24);
// - a 16-bit output adds one rounding: half an ulp, at most 2^-8 |y| (bf16) or 2^-11
//   |y| (f16).
// For fp32 inputs the bound also catches TF32 (10-bit mantissas: errors near 2^-11
// relative), so it proves the fp32 path computes in true fp32. The same problem run twice
// must give the same bits (the cached algorithm, one stream).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "kernels/cuda/bias_grad.h"
#include "kernels/cuda/gemm_lt.h"
#include "testing/column_order.h"
#include "testing/cuda_test.h"

namespace zt {
namespace {

using testing::DeviceArray;
using testing::DeviceValues;

// A normal(0, sd) tensor of n values in storage t.
DeviceValues random_values(DType t, size_t n, uint32_t seed, float sd) {
  return DeviceValues(t, testing::normal_values(n, seed, 0.0f, sd));
}

double output_rounding(DType t) {
  return t == DType::kBF16 ? std::ldexp(1.0, -8) : t == DType::kF16 ? std::ldexp(1.0, -11) : 0.0;
}

// Checks y against exact (double) with the bound above; abs_sum is sum |terms| per element.
void expect_within(const std::vector<float>& y, const std::vector<double>& exact, const std::vector<double>& abs_sum,
                   int K, DType out, const char* what) {
  const double gamma = (K + 2) * std::ldexp(1.0, -24);
  double worst = 0.0;
  for (size_t i = 0; i < y.size(); ++i) {
    const double bound = gamma * abs_sum[i] * (1.0 + output_rounding(out)) + output_rounding(out) * std::fabs(exact[i]);
    const double err = std::fabs(static_cast<double>(y[i]) - exact[i]);
    ASSERT_LE(err, bound) << what << " element " << i << ": " << y[i] << " vs exact " << exact[i];
    if (bound > 0) worst = std::max(worst, err / bound);
  }
  std::printf("  %s (%s out): worst error %.3f of its bound\n", what, dtype_name(out), worst);
}

void check_forward(DType t, int64_t N, int C, int OC) {
  auto lt = cuda::LtGemm::create();
  ASSERT_TRUE(lt.ok()) << lt.status().to_string();
  const size_t weights = static_cast<size_t>(OC) * C;
  DeviceValues inp = random_values(t, N * C, 1, 1.0f), w = random_values(t, weights, 2, 0.05f);
  DeviceValues b = random_values(t, OC, 3, 0.1f), res = random_values(t, N * OC, 4, 1.0f);
  DeviceValues out = random_values(t, N * OC, 5, 1.0f), out2 = random_values(t, N * OC, 6, 1.0f);
  for (void* dst : {out.get(), out2.get()}) {
    const Status s = cuda::linear_forward(**lt, t, dst, inp.get(), w.get(), b.get(), res.get(), N, C, OC, nullptr);
    ASSERT_TRUE(s.ok()) << s.to_string();
  }
  std::vector<double> exact(N * OC), abs_sum(N * OC);
  for (int64_t n = 0; n < N; ++n) {
    for (int o = 0; o < OC; ++o) {
      const double r = res.host()[n * OC + o], bias = b.host()[o];
      double s = r + bias, a = std::fabs(r) + std::fabs(bias);
      for (int c = 0; c < C; ++c) {
        const double p = static_cast<double>(inp.host()[n * C + c]) * w.host()[static_cast<size_t>(o) * C + c];
        s += p;
        a += std::fabs(p);
      }
      exact[n * OC + o] = s;
      abs_sum[n * OC + o] = a;
    }
  }
  const std::vector<float> y = out.download();
  expect_within(y, exact, abs_sum, C, t, "linear_forward");
  EXPECT_TRUE(testing::same_bits(y, out2.download())) << "two runs of one problem differ";
}

TEST(CudaGemm, LinearForwardWithBiasAndResidualIsWithinTheFp32SummationBound) {
  ZT_REQUIRE_CUDA();
  for (DType t : {DType::kF32, DType::kBF16, DType::kF16}) {
    check_forward(t, 256, 768, 2304);
    check_forward(t, 40, 64, 192);
  }
}

TEST(CudaGemm, LinearBackwardIsWithinTheFp32SummationBound) {
  ZT_REQUIRE_CUDA();
  auto lt = cuda::LtGemm::create();
  ASSERT_TRUE(lt.ok()) << lt.status().to_string();
  const int64_t N = 512;
  const int C = 256, OC = 384;
  for (DType t : {DType::kF32, DType::kBF16}) {
    const size_t weights = static_cast<size_t>(OC) * C;
    DeviceValues dout = random_values(t, N * OC, 7, 1.0f), inp = random_values(t, N * C, 8, 1.0f);
    DeviceValues w = random_values(t, weights, 9, 0.05f), dinp = random_values(t, N * C, 10, 1.0f);
    DeviceValues dw = random_values(DType::kF32, weights, 11, 0.01f), db = random_values(DType::kF32, OC, 12, 0.01f);
    const std::vector<float> dw0 = dw.host(), db0 = db.host();
    ASSERT_TRUE(cuda::linear_backward_input(**lt, t, t, dinp.get(), dout.get(), w.get(), N, C, OC, nullptr).ok());
    ASSERT_TRUE(cuda::linear_backward_weights(**lt, t, dw.f32(), dout.get(), inp.get(), N, C, OC, nullptr).ok());
    DeviceArray<float> ws(static_cast<size_t>(cuda::bias_grad_workspace_floats(N, OC)));
    cuda::bias_grad(t, db.f32(), dout.get(), N, OC, ws.get(), nullptr);
    std::vector<double> ex_in(N * C, 0.0), ab_in(N * C, 0.0), ex_w(static_cast<size_t>(OC) * C), ab_w(ex_w.size());
    std::vector<double> ex_b(OC), ab_b(OC);
    for (size_t i = 0; i < ex_w.size(); ++i) ex_w[i] = dw0[i], ab_w[i] = std::fabs(dw0[i]);
    for (int o = 0; o < OC; ++o) ex_b[o] = db0[o], ab_b[o] = std::fabs(db0[o]);
    for (int64_t n = 0; n < N; ++n) {
      for (int o = 0; o < OC; ++o) {
        const double g = dout.host()[n * OC + o];
        ex_b[o] += g, ab_b[o] += std::fabs(g);
        for (int c = 0; c < C; ++c) {
          const double pi = g * w.host()[static_cast<size_t>(o) * C + c], pw = g * inp.host()[n * C + c];
          ex_in[n * C + c] += pi, ab_in[n * C + c] += std::fabs(pi);
          ex_w[static_cast<size_t>(o) * C + c] += pw, ab_w[static_cast<size_t>(o) * C + c] += std::fabs(pw);
        }
      }
    }
    expect_within(dinp.download(), ex_in, ab_in, OC, t, "dinp");
    expect_within(dw.download(), ex_w, ab_w, static_cast<int>(N), DType::kF32, "dweight");
    expect_within(db.download(), ex_b, ab_b, static_cast<int>(N), DType::kF32, "dbias");
  }
}

// Rows that start 16-byte aligned take the packed chunk pass, others the one-column pass:
// both give the documented order's bits (a partial last chunk, a partial column tile).
TEST(CudaGemm, BiasGradientGivesTheSameBitsPackedOrNot) {
  ZT_REQUIRE_CUDA();
  const int64_t N = 1000;
  const int OC = 392;
  for (DType t : {DType::kF32, DType::kBF16, DType::kF16}) {
    const std::vector<float> values = testing::normal_values(static_cast<size_t>(N * OC) + 8, 21, 0.0f, 1.0f);
    DeviceValues dout(t, values), db_packed = random_values(DType::kF32, OC, 22, 0.01f);
    DeviceValues db_plain = random_values(DType::kF32, OC, 22, 0.01f);
    const size_t elem = t == DType::kF32 ? 4 : 2;
    DeviceArray<float> ws(static_cast<size_t>(cuda::bias_grad_workspace_floats(N, OC)));
    cuda::bias_grad(t, db_packed.f32(), dout.get(), N, OC, ws.get(), nullptr);
    cuda::bias_grad(t, db_plain.f32(), static_cast<char*>(dout.get()) + elem, N, OC, ws.get(), nullptr);
    const std::vector<float> first(dout.host().begin(), dout.host().begin() + N * OC);
    const std::vector<float> second(dout.host().begin() + 1, dout.host().begin() + 1 + N * OC);
    EXPECT_TRUE(testing::same_bits(db_packed.download(), testing::bias_grad_in_order(first, db_packed.host(), N, OC)))
        << dtype_name(t) << " packed";
    EXPECT_TRUE(testing::same_bits(db_plain.download(), testing::bias_grad_in_order(second, db_plain.host(), N, OC)))
        << dtype_name(t) << " one column a thread";
  }
}

}  // namespace
}  // namespace zt
