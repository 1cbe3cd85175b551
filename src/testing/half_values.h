// 16-bit (bf16 or fp16, by DType) test values for the half kernel tables: random values
// rounded to the 16-bit type (h) with the same values widened back exactly (f), so a
// reference computes on exactly what the 16-bit kernel sees; narrow/widen; and bitwise
// comparison reporting the first difference. Header-only, tests only.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "kernels/cpu/half_convert.h"
#include "testing/gradcheck.h"

namespace zt::testing {

using Floats = std::vector<float>;
using Halves = std::vector<half_t>;

struct HalfValues {
  Halves h;  // values in the table's 16-bit type
  Floats f;  // the same values widened (exact)
};

inline Halves narrow(DType t, const Floats& f) {
  Halves h(f.size());
  f32_to_half(t, h.data(), f.data(), static_cast<int64_t>(f.size()));
  return h;
}

inline Floats widen(DType t, const Halves& h) {
  Floats f(h.size());
  half_to_f32(t, f.data(), h.data(), static_cast<int64_t>(h.size()));
  return f;
}

inline HalfValues random_half(DType t, size_t n, uint64_t seed, float scale = 1.0f) {
  HalfValues v;
  v.h = narrow(t, random_vector(n, seed, scale));
  v.f = widen(t, v.h);
  return v;
}

// How a failing element is shown: a float's value, a 16-bit element's bit pattern.
inline float shown(float x) { return x; }
inline unsigned shown(half_t x) { return x.bits; }

// Bitwise equality, reporting the first difference.
template <typename T>
void expect_same_bits(const std::vector<T>& got, const std::vector<T>& want, const char* what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(std::memcmp(&got[i], &want[i], sizeof(T)), 0) << what << "[" << i << "]: " << shown(got[i]) << " vs " << shown(want[i]);
  }
}

}  // namespace zt::testing
