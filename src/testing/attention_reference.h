// The double-precision reference of causal attention for the attention tests (CUDA's
// attention_test.cc and flash_attention_test.cc, the CPU's flash_attention_test.cc): forward and backward computed on the host
// from the same storage-representable inputs, with each element's magnitude (the same
// expression with every term replaced by its absolute value) for the rounding bounds.
// Test-only; included by *_test.cc files alone.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

namespace zt::testing {

struct AttentionReference {  // value and magnitude per element
  std::vector<double> y, ym, p, dqkv, dqkvm;
};

// The double reference of forward and backward for one (B, T, C, NH).
inline AttentionReference attention_reference(const std::vector<float>& qkv, const std::vector<float>& dy, int B, int T, int C, int NH) {
  const int hs = C / NH, C3 = 3 * C;
  const double scale = 1.0 / std::sqrt(static_cast<double>(hs));
  AttentionReference r;
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

// Each |got - want| within eps |magnitude| + floor (floor: an absolute allowance, for
// roundings into a format's subnormal range).
inline void expect_bounded(const std::vector<float>& got, const std::vector<double>& want, const std::vector<double>& mag,
                    double eps, const std::string& what, double floor = 0.0) {
  ASSERT_EQ(got.size(), want.size());
  double worst = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double err = std::fabs(got[i] - want[i]), bound = eps * mag[i] + floor + 1e-30;
    ASSERT_LE(err, bound) << what << " element " << i << ": " << got[i] << " vs " << want[i];
    worst = std::max(worst, err / bound);
  }
  std::printf("  %s: worst error %.3f of its bound\n", what.c_str(), worst);
}

}  // namespace zt::testing
