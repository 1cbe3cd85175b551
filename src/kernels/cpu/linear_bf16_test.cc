// The bf16 linear layer against the same layer in double on the bf16 values: every output
// within one bf16 rounding (2^-8 relative) of the exact sum plus the fp32 accumulation
// bound gamma_K sum|ab|; the fp32 weight and bias gradients within the accumulation bound.
#include "kernels/cpu/linear_bf16.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "kernels/cpu/elementwise.h"
#include "testing/bf16_values.h"
#include "testing/gradcheck.h"

namespace zt {
namespace {

using testing::random_bf16;

float widen(bf16_t h) {
  float f;
  cast_bf16_to_f32(&f, &h, 1);
  return f;
}

const double kU = std::ldexp(1.0, -24), kUbf16 = std::ldexp(1.0, -8);

TEST(LinearBf16, ForwardRoundsOnceAfterFp32Sums) {
  const int N = 24, C = 200, OC = 40;
  const testing::Bf16Values x = random_bf16(static_cast<size_t>(N) * C, 1), w = random_bf16(static_cast<size_t>(OC) * C, 2),
             res = random_bf16(static_cast<size_t>(N) * OC, 3), b = random_bf16(OC, 4);
  std::vector<bf16_t> out = res.h;  // residual aliased with the output, as the blocks do
  linear_forward_bf16(out.data(), x.h.data(), w.h.data(), b.h.data(), out.data(), N, C, OC);
  const double gamma = (C + 2) * kU / (1 - (C + 2) * kU);
  for (int i = 0; i < N; ++i) {
    for (int o = 0; o < OC; ++o) {
      double exact = res.f[static_cast<size_t>(i) * OC + o] + b.f[o], mag = std::fabs(exact);
      for (int k = 0; k < C; ++k) {
        const double p = static_cast<double>(x.f[static_cast<size_t>(i) * C + k]) * w.f[static_cast<size_t>(o) * C + k];
        exact += p;
        mag += std::fabs(p);
      }
      const double got = widen(out[static_cast<size_t>(i) * OC + o]);
      ASSERT_LE(std::fabs(got - exact), kUbf16 * std::fabs(exact) + (1 + kUbf16) * gamma * mag)
          << "(" << i << ", " << o << ")";
    }
  }
}

TEST(LinearBf16, BackwardAccumulatesFp32Gradients) {
  const int N = 30, C = 48, OC = 70;
  const testing::Bf16Values x = random_bf16(static_cast<size_t>(N) * C, 5), w = random_bf16(static_cast<size_t>(OC) * C, 6),
             dy = random_bf16(static_cast<size_t>(N) * OC, 7);
  const std::vector<float> dw0 = testing::random_vector(static_cast<size_t>(OC) * C, 8), db0 = testing::random_vector(OC, 9);
  std::vector<float> dw = dw0, db = db0;
  std::vector<bf16_t> dx(static_cast<size_t>(N) * C);
  linear_backward_bf16(dx.data(), dw.data(), db.data(), dy.h.data(), x.h.data(), w.h.data(), N, C, OC);
  const double gN = (N + 2) * kU / (1 - (N + 2) * kU), gOC = (OC + 2) * kU / (1 - (OC + 2) * kU);
  for (int o = 0; o < OC; ++o) {
    double sb = db0[o], mb = std::fabs(sb);
    for (int i = 0; i < N; ++i) {
      sb += dy.f[static_cast<size_t>(i) * OC + o];
      mb += std::fabs(dy.f[static_cast<size_t>(i) * OC + o]);
    }
    ASSERT_LE(std::fabs(db[o] - sb), gN * mb) << "dbias " << o;
    for (int c = 0; c < C; ++c) {
      double s = dw0[static_cast<size_t>(o) * C + c], m = std::fabs(s);
      for (int i = 0; i < N; ++i) {
        const double p = static_cast<double>(dy.f[static_cast<size_t>(i) * OC + o]) * x.f[static_cast<size_t>(i) * C + c];
        s += p;
        m += std::fabs(p);
      }
      ASSERT_LE(std::fabs(dw[static_cast<size_t>(o) * C + c] - s), 2 * gN * m) << "dweight " << o << "," << c;
    }
  }
  for (int i = 0; i < N; ++i) {
    for (int c = 0; c < C; ++c) {
      double s = 0.0, m = 0.0;
      for (int o = 0; o < OC; ++o) {
        const double p = static_cast<double>(dy.f[static_cast<size_t>(i) * OC + o]) * w.f[static_cast<size_t>(o) * C + c];
        s += p;
        m += std::fabs(p);
      }
      ASSERT_LE(std::fabs(widen(dx[static_cast<size_t>(i) * C + c]) - s), kUbf16 * std::fabs(s) + (1 + kUbf16) * gOC * m)
          << "dinp " << i << "," << c;
    }
  }
}

}  // namespace
}  // namespace zt
