// Test helpers for the PyTorch oracle tests (tests/oracle/): the Python interpreter
// (ZT_PYTHON, default /usr/bin/python3), the source tree the reference scripts live in
// (ZT_SOURCE_DIR, default the configured one), and the normwise comparison every oracle
// uses. Header-only, tests only.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdlib>
#include <string>

namespace zt::testing {

inline std::string python() {
  const char* p = std::getenv("ZT_PYTHON");
  return p != nullptr ? p : "/usr/bin/python3";
}

inline std::string oracle_source_dir() {
  const char* p = std::getenv("ZT_SOURCE_DIR");
  return p != nullptr ? p : ZT_SOURCE_DIR;
}

// max |a - b| / max |b| over n values (max |a - b| when b is all zeros).
inline double max_rel(const float* a, const float* b, size_t n) {
  double diff = 0.0, scale = 0.0;
  for (size_t i = 0; i < n; ++i) {
    diff = std::max(diff, std::fabs(static_cast<double>(a[i]) - b[i]));
    scale = std::max(scale, std::fabs(static_cast<double>(b[i])));
  }
  return scale > 0.0 ? diff / scale : diff;
}

}  // namespace zt::testing
