// The f16/bf16 conversions: every 16-bit pattern widens exactly and narrows back to
// itself (NaN to a quiet NaN); f32 -> f16 agrees with a reference that picks the nearest
// f16 value by search over the sorted table of all finite f16 values (ties to the even
// pattern, >= 65520 to inf) on exact values, ties, their f32 neighbours, subnormals,
// overflow, inf, NaN and random bit patterns. The bulk loops (F16C where available) must
// give the same bits as the scalar functions.
#include "kernels/cpu/half_convert.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <vector>

#include "core/rng.h"

namespace zt {
namespace {

float from_bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

uint32_t to_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

bool f16_is_nan(uint16_t h) { return (h & 0x7c00u) == 0x7c00u && (h & 0x3ffu) != 0; }

// The value of a finite non-negative f16 pattern, from the format's definition.
double f16_value(uint32_t h) {
  const int e = static_cast<int>(h >> 10), m = static_cast<int>(h & 0x3ffu);
  return e == 0 ? std::ldexp(m, -24) : std::ldexp(1024 + m, e - 25);
}

// Reference rounding: binary search over the 0x7c00 finite non-negative f16 values.
uint16_t reference_f16(float x) {
  if (std::isnan(x)) return 0x7e00;
  const uint32_t sign = std::signbit(x) ? 0x8000u : 0u;
  const double a = std::fabs(static_cast<double>(x));
  if (a >= 65520.0) return static_cast<uint16_t>(sign | 0x7c00u);
  static const std::vector<double> table = [] {
    std::vector<double> t(0x7c00);
    for (uint32_t h = 0; h < 0x7c00; ++h) t[h] = f16_value(h);
    return t;
  }();
  const size_t hi = std::upper_bound(table.begin(), table.end(), a) - table.begin();  // first > a
  const size_t lo = hi - 1;                                                            // table[lo] <= a
  if (hi == table.size()) return static_cast<uint16_t>(sign | lo);                        // (65504, 65520)
  const double dl = a - table[lo], dh = table[hi] - a;
  const size_t pick = dl < dh ? lo : dh < dl ? hi : (lo % 2 == 0 ? lo : hi);
  return static_cast<uint16_t>(sign | pick);
}

void expect_narrows_like_reference(const std::vector<float>& xs) {
  std::vector<f16_t> bulk(xs.size());
  f32_to_f16(bulk.data(), xs.data(), static_cast<int64_t>(xs.size()));
  for (size_t i = 0; i < xs.size(); ++i) {
    const uint16_t want = reference_f16(xs[i]), got = f32_to_f16_bits(xs[i]);
    if (std::isnan(xs[i])) {
      ASSERT_TRUE(f16_is_nan(got) && (got & 0x8000u) == (to_bits(xs[i]) >> 16 & 0x8000u)) << std::hex << got;
    } else {
      ASSERT_EQ(got, want) << std::hexfloat << xs[i];
    }
    ASSERT_EQ(bulk[i].bits, got) << "bulk (f16c " << f16_uses_f16c() << ") at " << std::hexfloat << xs[i];
  }
}

TEST(HalfConvert, F16WidensEveryPatternExactlyAndBack) {
  std::vector<f16_t> all(65536), back(65536);
  for (uint32_t h = 0; h < 65536; ++h) all[h] = f16_t{static_cast<uint16_t>(h)};
  std::vector<float> bulk(65536);
  f16_to_f32(bulk.data(), all.data(), 65536);
  f32_to_f16(back.data(), bulk.data(), 65536);
  for (uint32_t h = 0; h < 65536; ++h) {
    const float f = f16_bits_to_f32(static_cast<uint16_t>(h));
    ASSERT_EQ(to_bits(bulk[h]), to_bits(f)) << "bulk widening, pattern " << std::hex << h;
    if (f16_is_nan(static_cast<uint16_t>(h))) {
      ASSERT_TRUE(std::isnan(f)) << std::hex << h;
      ASSERT_EQ(f32_to_f16_bits(f), h | 0x200u) << std::hex << h;  // quiet, payload kept
      ASSERT_EQ(back[h].bits, h | 0x200u) << std::hex << h;
      continue;
    }
    const uint32_t mag = h & 0x7fffu;
    const double want = mag == 0x7c00u ? INFINITY : f16_value(mag);
    ASSERT_EQ(static_cast<double>(f), (h & 0x8000u) ? -want : want) << std::hex << h;
    ASSERT_EQ(std::signbit(f), (h & 0x8000u) != 0) << std::hex << h;
    ASSERT_EQ(f32_to_f16_bits(f), h) << std::hex << h;
    ASSERT_EQ(back[h].bits, h) << std::hex << h;
  }
  std::printf("  f16 conversions use F16C: %s\n", f16_uses_f16c() ? "yes" : "no");
}

TEST(HalfConvert, F16NarrowsToNearestEvenAtTiesSubnormalsAndOverflow) {
  std::vector<float> xs;
  for (uint32_t h = 0; h < 0x7c00; ++h) {  // every finite value, its upper midpoint, and their neighbours
    const float v = static_cast<float>(f16_value(h));
    const float mid = static_cast<float>((f16_value(h) + (h + 1 < 0x7c00 ? f16_value(h + 1) : 65536.0)) / 2);
    for (float x : {v, mid, std::nextafter(mid, 0.0f), std::nextafter(mid, INFINITY), std::nextafter(v, INFINITY)}) {
      xs.push_back(x);
      xs.push_back(-x);
    }
  }
  const float specials[] = {0.0f, -0.0f, INFINITY, -INFINITY, std::numeric_limits<float>::max(),
                            std::numeric_limits<float>::denorm_min(), std::numeric_limits<float>::min(),
                            std::ldexp(1.0f, -25), std::ldexp(1.0f, -26), 65519.996f, 65520.0f, 1e10f,
                            from_bits(0x7fc00000u), from_bits(0xffc00001u), from_bits(0x7f800001u),
                            from_bits(0x7fbfe000u)};
  for (float x : specials) xs.push_back(x);
  Rng rng(7);
  for (int i = 0; i < 300000; ++i) {
    const uint32_t u = static_cast<uint32_t>(rng.next_u64());
    xs.push_back(from_bits(u));
    xs.push_back(from_bits((u & 0x87ffffffu) | 0x30000000u));  // exponents near f16's range
  }
  expect_narrows_like_reference(xs);
}

TEST(HalfConvert, Bf16RoundTripsEveryPattern) {
  std::vector<bf16_t> all(65536), back(65536);
  for (uint32_t h = 0; h < 65536; ++h) all[h] = bf16_t{static_cast<uint16_t>(h)};
  std::vector<float> f(65536);
  bf16_to_f32(f.data(), all.data(), 65536);
  f32_to_bf16(back.data(), f.data(), 65536);
  for (uint32_t h = 0; h < 65536; ++h) {
    ASSERT_EQ(to_bits(f[h]), h << 16) << std::hex << h;
    const bool nan = (h & 0x7f80u) == 0x7f80u && (h & 0x7fu) != 0;
    ASSERT_EQ(back[h].bits, nan ? (h | 0x40u) : h) << std::hex << h;
  }
}

TEST(HalfConvert, DispatchesOnComputeDtype) {
  const float x[3] = {1.0f / 3.0f, -65520.0f, 3.0e38f};
  half_t b[3], h[3];
  f32_to_half(DType::kBF16, b, x, 3);
  f32_to_half(DType::kF16, h, x, 3);
  EXPECT_EQ(b[0].bits, 0x3eabu);
  EXPECT_EQ(h[0].bits, 0x3555u);
  EXPECT_EQ(h[1].bits, 0xfc00u);  // overflow to -inf
  EXPECT_EQ(h[2].bits, 0x7c00u);
  float w[3];
  half_to_f32(DType::kF16, w, h, 3);
  EXPECT_EQ(w[0], 0.333251953125f);
  EXPECT_DEATH(f32_to_half(DType::kF32, b, x, 3), "bf16 or f16");
}

}  // namespace
}  // namespace zt
