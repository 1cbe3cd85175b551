// Comparing a kernel's SIMD paths with its scalar path: the SIMD ISAs this CPU can run,
// and a normwise closeness check (SIMD sums in another order and fuses multiply-adds, so
// results agree within float rounding of the scalar path, relative to the largest value).
// Header-only, tests only.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/cpu_features.h"

namespace zt::testing {

inline std::vector<Isa> simd_isas() {
  std::vector<Isa> out;
  if (detect_isa() >= Isa::kAvx2) out.push_back(Isa::kAvx2);
  if (detect_isa() >= Isa::kAvx512) out.push_back(Isa::kAvx512);
  return out;
}

inline void expect_close(const std::vector<float>& a, const std::vector<float>& b, double rtol, const char* what,
                         Isa isa) {
  ASSERT_EQ(a.size(), b.size());
  double scale = 0.0;
  for (float x : b) scale = std::max(scale, static_cast<double>(std::fabs(x)));
  for (size_t i = 0; i < a.size(); ++i) {
    ASSERT_NEAR(a[i], b[i], rtol * (scale + 1e-30)) << what << " on " << isa_name(isa) << " at " << i;
  }
}

}  // namespace zt::testing
