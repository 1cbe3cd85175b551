// Random bf16 test inputs: each value rounded to bf16 (h) and the same values widened
// back to fp32 (f), so references can be computed on exactly what a bf16 kernel sees.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/cpu/elementwise.h"
#include "testing/gradcheck.h"

namespace zt::testing {

struct Bf16Values {
  std::vector<bf16_t> h;  // the bf16 values
  std::vector<float> f;   // the same values in fp32 (exact)
};

inline Bf16Values random_bf16(size_t n, uint64_t seed) {
  Bf16Values m;
  const std::vector<float> x = random_vector(n, seed);
  m.h.resize(n);
  m.f.resize(n);
  cast_f32_to_bf16(m.h.data(), x.data(), static_cast<int64_t>(n));
  cast_bf16_to_f32(m.f.data(), m.h.data(), static_cast<int64_t>(n));
  return m;
}

}  // namespace zt::testing
