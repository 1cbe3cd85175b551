// Partial-vector loads and stores for the last (n % kWidth) elements of an array:
// the tail goes through a zero-padded (or `fill`-padded) stack buffer, so one kernel
// body serves every ISA and no load reads past the end of an array.
#pragma once

#include <cstring>

namespace zt::simd {

template <class S>
inline typename S::V load_tail(const float* p, int count, float fill) {
  alignas(64) float tmp[S::kWidth];
  for (int i = 0; i < S::kWidth; ++i) tmp[i] = fill;
  std::memcpy(tmp, p, static_cast<size_t>(count) * sizeof(float));
  return S::load(tmp);
}

template <class S>
inline void store_tail(float* p, typename S::V x, int count) {
  alignas(64) float tmp[S::kWidth];
  S::store(tmp, x);
  std::memcpy(p, tmp, static_cast<size_t>(count) * sizeof(float));
}

}  // namespace zt::simd
