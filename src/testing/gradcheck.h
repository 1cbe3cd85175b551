// Test helpers: central finite differences against an analytic gradient, and random
// fills. Header-only, used by *_test.cc files only.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/rng.h"

namespace zt::testing {

inline std::vector<float> random_vector(size_t n, uint64_t seed, float scale = 1.0f) {
  Rng rng(seed);
  std::vector<float> v(n);
  for (float& x : v) x = static_cast<float>(rng.normal()) * scale;
  return v;
}

// Checks up to `samples` coordinates of x (spread evenly) against analytic[i]:
// |numeric - analytic| <= rtol * max(|numeric|, |analytic|) + atol, where numeric is
// (L(x+h) - L(x-h)) / 2h with L evaluated in double by `loss`. Reports the worst case.
inline void expect_gradient(const std::string& label, float* x, size_t n, const std::vector<float>& analytic,
                            const std::function<double()>& loss, float h = 1e-2f, double rtol = 1e-2,
                            double atol = 1e-4, size_t samples = 48) {
  ASSERT_EQ(analytic.size(), n) << label;
  const size_t stride = std::max<size_t>(1, n / samples);
  double worst = 0.0;
  size_t checked = 0;
  for (size_t i = 0; i < n; i += stride) {
    const float saved = x[i];
    x[i] = saved + h;
    const double lp = loss();
    x[i] = saved - h;
    const double lm = loss();
    x[i] = saved;
    const double numeric = (lp - lm) / (2.0 * static_cast<double>(h));
    const double a = analytic[i];
    const double err = std::fabs(numeric - a);
    const double bound = rtol * std::max(std::fabs(numeric), std::fabs(a)) + atol;
    worst = std::max(worst, err / bound);
    EXPECT_LE(err, bound) << label << "[" << i << "]: numeric " << numeric << " analytic " << a;
    ++checked;
  }
  EXPECT_GT(checked, 0u);
  std::printf("  gradcheck %-24s %zu coords, worst error/bound %.3f\n", label.c_str(), checked, worst);
}

// sum_i out[i] * r[i] in double: a scalar loss whose d/d(out) is r.
inline double weighted_sum(const float* out, const std::vector<float>& r) {
  double s = 0.0;
  for (size_t i = 0; i < r.size(); ++i) s += static_cast<double>(out[i]) * r[i];
  return s;
}

}  // namespace zt::testing
