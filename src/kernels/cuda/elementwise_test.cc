// The CUDA casts and accumulation against the CPU's, bit for bit: every one of the 65,536
// 16-bit patterns widened (bf16 and f16), and fp32 values narrowed from every class
// (normal, subnormal, both f16 overflow thresholds and their neighbours, NaN with
// payloads, infinities, signed zeros, rounding ties) plus a million random bit patterns.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "kernels/cpu/elementwise.h"
#include "kernels/cpu/half_convert.h"
#include "kernels/cuda/elementwise.h"
#include "testing/cuda_test.h"

namespace zt {
namespace {

using testing::DeviceArray;

std::vector<float> from_bits(const std::vector<uint32_t>& bits) {
  std::vector<float> out(bits.size());
  std::memcpy(out.data(), bits.data(), bits.size() * 4);
  return out;
}

// fp32 values that exercise every branch of the narrowing conversions.
std::vector<float> narrowing_inputs() {
  std::vector<uint32_t> bits = {0x00000000u, 0x80000000u, 0x7f800000u, 0xff800000u, 0x7fc00000u, 0xffc00001u,
                                0x7f800001u, 0x7fbfffffu, 0x477fe000u, 0x477fefffu, 0x477ff000u, 0x477ff001u,
                                0x38800000u, 0x387fffffu, 0x33000000u, 0x33000001u, 0x337fffffu, 0x00000001u,
                                0x3f808000u, 0x3f818000u, 0x3f80c000u, 0x7f7fffffu, 0x3f7fffffu, 0x00800000u};
  std::mt19937 rng(7);
  for (int i = 0; i < (1 << 20); ++i) bits.push_back(rng());
  for (uint32_t h = 0; h < 65536; ++h) {  // f16 and bf16 ties: halfway between neighbours
    bits.push_back((h << 16) | 0x8000u);
    bits.push_back(((h & 0x7fffu) + 0x1c000u) << 13 | 0x1000u);
  }
  return from_bits(bits);
}

TEST(CudaElementwise, WideningEvery16BitPatternMatchesTheCpu) {
  ZT_REQUIRE_CUDA();
  std::vector<half_t> all(65536);
  for (uint32_t h = 0; h < 65536; ++h) all[h] = half_t{static_cast<uint16_t>(h)};
  for (DType t : {DType::kBF16, DType::kF16}) {
    DeviceArray<half_t> in(all);
    DeviceArray<float> out(all.size());
    cuda::cast_to_f32(t, out.get(), in.get(), static_cast<int64_t>(all.size()), nullptr);
    std::vector<float> cpu(all.size());
    half_to_f32(t, cpu.data(), all.data(), static_cast<int64_t>(all.size()));
    EXPECT_TRUE(testing::same_bits(out.download(), cpu)) << dtype_name(t);
  }
}

TEST(CudaElementwise, NarrowingMatchesTheCpuBitForBit) {
  ZT_REQUIRE_CUDA();
  const std::vector<float> x = narrowing_inputs();
  const int64_t n = static_cast<int64_t>(x.size());
  for (DType t : {DType::kBF16, DType::kF16}) {
    DeviceArray<float> in(x);
    DeviceArray<half_t> out(x.size());
    cuda::cast_from_f32(t, out.get(), in.get(), n, nullptr);
    std::vector<half_t> cpu(x.size());
    f32_to_half(t, cpu.data(), x.data(), n);
    const std::vector<half_t> gpu = out.download();
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < gpu.size(); ++i) {
      if (gpu[i].bits != cpu[i].bits && bad++ == 0) first = i;
    }
    EXPECT_EQ(bad, 0u) << dtype_name(t) << ": first at " << first << " (input " << x[first] << "): gpu 0x" << std::hex
                       << gpu[first].bits << " cpu 0x" << cpu[first].bits;
  }
}

// Sums of NaN are NaN on both, but GPU arithmetic returns the canonical NaN where x86
// returns an operand's payload (seen on an H200): NaNs compare as NaN, all else by bits.
TEST(CudaElementwise, AccumulateMatchesTheCpu) {
  ZT_REQUIRE_CUDA();
  const std::vector<float> a = narrowing_inputs(), b(a.rbegin(), a.rend());
  DeviceArray<float> dst(a), src(b);
  cuda::accumulate(dst.get(), src.get(), static_cast<int64_t>(a.size()), nullptr);
  std::vector<float> cpu = a;
  accumulate(cpu.data(), b.data(), static_cast<int64_t>(cpu.size()));
  EXPECT_TRUE(testing::same_bits(dst.download(), cpu, /*any_nan=*/true));
}

}  // namespace
}  // namespace zt
