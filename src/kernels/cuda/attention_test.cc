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
#include "testing/cuda_test.h"

namespace zt {
namespace {

using testing::DeviceArray;
using testing::DeviceValues;

struct Reference {  // value and magnitude per element
  std::vector<double> y, ym, p, dqkv, dqkvm;
};

// The double reference of forward and backward for one (B, T, C, NH).
Reference reference(const std::vector<float>& qkv, const std::vector<float>& dy, int B, int T, int C, int NH) {
  const int hs = C / NH, C3 = 3 * C;
  const double scale = 1.0 / std::sqrt(static_cast<double>(hs));
  Reference r;
  r.y.assign(static_cast<size_t>(B) * T * C, 0.0);
  r.ym = r.y;
  r.p.assign(static_cast<size_t>(B) * NH * T * T, 0.0);
  r.dqkv.assign(qkv.size(), 0.0);
  r.dqkvm = r.dqkv;
  auto at = [&](int b, int t, int part, int h, int d) { return (static_cast<size_t>(b) * T + t) * C3 + part * C + h * hs + d; };
  for (int b = 0; b < B; ++b) {
    for (int h = 0; h < NH; ++h) {
      std::vector<double> P(static_cast<size_t>(T) * T, 0.0), dP = P, dPm = P;
      for (int i = 0; i < T; ++i) {
        double m = -INFINITY;
        std::vector<double> s(i + 1);
        for (int j = 0; j <= i; ++j) {
          double acc = 0;
          for (int d = 0; d < hs; ++d) acc += static_cast<double>(qkv[at(b, i, 0, h, d)]) * qkv[at(b, j, 1, h, d)];
          s[j] = acc * scale;
          m = std::max(m, s[j]);
        }
        double sum = 0;
        for (int j = 0; j <= i; ++j) sum += std::exp(s[j] - m);
        for (int j = 0; j <= i; ++j) P[i * T + j] = std::exp(s[j] - m) / sum;
        for (int d = 0; d < hs; ++d) {
          double y = 0, ym = 0;
          for (int j = 0; j <= i; ++j) y += P[i * T + j] * qkv[at(b, j, 2, h, d)], ym += P[i * T + j] * std::fabs(qkv[at(b, j, 2, h, d)]);
          r.y[(static_cast<size_t>(b) * T + i) * C + h * hs + d] = y;
          r.ym[(static_cast<size_t>(b) * T + i) * C + h * hs + d] = ym;
        }
      }
      for (int i = 0; i < T * T; ++i) r.p[(static_cast<size_t>(b) * NH + h) * T * T + i] = P[i];
      auto dout = [&](int t, int d) { return static_cast<double>(dy[(static_cast<size_t>(b) * T + t) * C + h * hs + d]); };
      for (int i = 0; i < T; ++i) {
        for (int j = 0; j <= i; ++j) {
          for (int d = 0; d < hs; ++d) {
            dP[i * T + j] += dout(i, d) * qkv[at(b, j, 2, h, d)];
            dPm[i * T + j] += std::fabs(dout(i, d) * qkv[at(b, j, 2, h, d)]);
          }
        }
      }
      for (int i = 0; i < T; ++i) {
        double dot = 0, dotm = 0;
        for (int j = 0; j <= i; ++j) dot += P[i * T + j] * dP[i * T + j], dotm += P[i * T + j] * dPm[i * T + j];
        for (int j = 0; j <= i; ++j) {
          const double ds = scale * P[i * T + j] * (dP[i * T + j] - dot);
          const double dsm = scale * P[i * T + j] * (dPm[i * T + j] + dotm);
          for (int d = 0; d < hs; ++d) {
            r.dqkv[at(b, i, 0, h, d)] += ds * qkv[at(b, j, 1, h, d)];
            r.dqkvm[at(b, i, 0, h, d)] += dsm * std::fabs(qkv[at(b, j, 1, h, d)]);
            r.dqkv[at(b, j, 1, h, d)] += ds * qkv[at(b, i, 0, h, d)];
            r.dqkvm[at(b, j, 1, h, d)] += dsm * std::fabs(qkv[at(b, i, 0, h, d)]);
            r.dqkv[at(b, j, 2, h, d)] += P[i * T + j] * dout(i, d);
            r.dqkvm[at(b, j, 2, h, d)] += P[i * T + j] * std::fabs(dout(i, d));
          }
        }
      }
    }
  }
  return r;
}

void expect_bounded(const std::vector<float>& got, const std::vector<double>& want, const std::vector<double>& mag,
                    double eps, const std::string& what) {
  ASSERT_EQ(got.size(), want.size());
  double worst = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double err = std::fabs(got[i] - want[i]), bound = eps * mag[i] + 1e-30;
    ASSERT_LE(err, bound) << what << " element " << i << ": " << got[i] << " vs " << want[i];
    worst = std::max(worst, err / bound);
  }
  std::printf("  %s: worst error %.3f of its bound\n", what.c_str(), worst);
}

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
    const Reference r = reference(in.host(), dout.host(), B, T, C, NH);
    const double u16 = t == DType::kBF16 ? std::ldexp(1.0, -9) : t == DType::kF16 ? std::ldexp(1.0, -12) : 0.0;
    const double eps = 4.0 * (T + C / NH + 16) * std::ldexp(1.0, -24) + 8.0 * u16;
    expect_bounded(y.download(), r.y, r.ym, eps, std::string("y ") + dtype_name(t));
    expect_bounded(att.download(), r.p, r.p, eps, std::string("P ") + dtype_name(t));
    expect_bounded(dqkv.download(), r.dqkv, r.dqkvm, eps, std::string("dqkv ") + dtype_name(t));
  }
}

}  // namespace
}  // namespace zt
