// The bulk bf16 casts: each SIMD ISA's one-thread casts in the kernel table (the ISA structs'
// load_bf16 / store_bf16, which the bf16 kernels use too; every SIMD ISA this CPU has) give
// the scalar ISA's bits (core/half_bits.h's functions lane by lane, themselves checked on ties,
// NaN and overflow below), widening every 16-bit pattern and narrowing every pattern's f32
// value, its neighbours and the round-to-nearest-even ties around it (NaN payloads,
// infinities, subnormals, overflow to inf included) and random bit patterns, at a length with
// a ragged tail. The public casts agree with them too.
#include "kernels/cpu/bf16_convert.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "core/half_bits.h"
#include "core/rng.h"
#include "kernels/cpu/kernel_table.h"
#include "testing/isa_compare.h"

namespace zt {
namespace {

struct Path {
  const char* name;
  NarrowFn narrow;
  WidenFn widen;
};

// The scalar ISA's casts (core/half_bits.h's functions lane by lane) are the reference.
const KernelTable& reference() { return cpu_kernels_for(Isa::kScalar); }

std::vector<Path> isa_paths() {
  std::vector<Isa> isas = testing::simd_isas();
  std::vector<Path> paths;
  for (Isa isa : isas) paths.push_back({isa_name(isa), cpu_kernels_for(isa).narrow_bf16, cpu_kernels_for(isa).widen_bf16});
  return paths;
}

// Every pattern's value, u - 1, u + 1 and the values that round at the pattern's edges.
std::vector<float> narrowing_inputs() {
  std::vector<uint32_t> bits;
  for (uint32_t h = 0; h < 65536; ++h) {
    const uint32_t u = h << 16;
    for (uint32_t off : {0u, 1u, 0x7fffu, 0x8000u, 0x8001u, 0xffffu}) bits.push_back(u + off);
  }
  Rng rng(7);
  for (int i = 0; i < 200003; ++i) bits.push_back(static_cast<uint32_t>(rng.next_u64()));
  std::vector<float> v(bits.size());
  std::memcpy(v.data(), bits.data(), bits.size() * 4);
  return v;
}

TEST(Bf16Convert, EveryVectorPathGivesTheScalarBits) {
  std::vector<uint16_t> patterns(65536 + 7);
  for (size_t i = 0; i < patterns.size(); ++i) patterns[i] = static_cast<uint16_t>(i * 40503u);
  const std::vector<float> inputs = narrowing_inputs();
  std::vector<float> want_wide(patterns.size()), got_wide(patterns.size());
  std::vector<uint16_t> want_narrow(inputs.size()), got_narrow(inputs.size());
  reference().widen_bf16(want_wide.data(), patterns.data(), static_cast<int64_t>(patterns.size()));
  reference().narrow_bf16(want_narrow.data(), inputs.data(), static_cast<int64_t>(inputs.size()));
  for (const Path& p : isa_paths()) {
    p.widen(got_wide.data(), patterns.data(), static_cast<int64_t>(patterns.size()));
    p.narrow(got_narrow.data(), inputs.data(), static_cast<int64_t>(inputs.size()));
    EXPECT_EQ(std::memcmp(got_wide.data(), want_wide.data(), want_wide.size() * 4), 0) << p.name;
    for (size_t i = 0; i < inputs.size(); ++i) {
      ASSERT_EQ(got_narrow[i], want_narrow[i]) << p.name << " input " << i;
    }
  }
  std::vector<bf16_t> cast(inputs.size());
  cast_f32_to_bf16(cast.data(), inputs.data(), static_cast<int64_t>(inputs.size()));
  for (size_t i = 0; i < inputs.size(); ++i) ASSERT_EQ(cast[i].bits, want_narrow[i]) << "cast input " << i;
  std::vector<float> back(patterns.size());
  cast_bf16_to_f32(back.data(), reinterpret_cast<const bf16_t*>(patterns.data()), static_cast<int64_t>(patterns.size()));
  EXPECT_EQ(std::memcmp(back.data(), want_wide.data(), back.size() * 4), 0);
}

TEST(Bf16Convert, ScalarNarrowingRoundsTiesToEvenAndKeepsNanQuiet) {
  uint16_t out[4];
  const uint32_t bits[4] = {0x3f808000u, 0x3f818000u, 0x7f800001u, 0xff7fffffu};
  float in[4];
  std::memcpy(in, bits, sizeof(in));
  reference().narrow_bf16(out, in, 4);
  EXPECT_EQ(out[0], 0x3f80);  // a tie rounds to the even pattern
  EXPECT_EQ(out[1], 0x3f82);
  EXPECT_EQ(out[2], 0x7fc0);  // a signalling NaN becomes quiet
  EXPECT_EQ(out[3], 0xff80);  // the largest finite negative float rounds to -inf
}

}  // namespace
}  // namespace zt
