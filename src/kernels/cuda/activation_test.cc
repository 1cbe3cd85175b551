// GELU and SwiGLU on the GPU against the CPU's AVX2 / AVX-512 kernels, bit for bit, in
// fp32 and both 16-bit storages (the CUDA kernels fuse the multiply-adds where those ISAs
// do; vmath.cuh). Inputs span the whole range the kernels see, saturation included.
// On a CPU without AVX2 the bitwise comparison has no reference and the test says so.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "kernels/cpu/kernel_table.h"
#include "kernels/cuda/activation.h"
#include "testing/cuda_test.h"
#include "testing/isa_compare.h"

namespace zt {
namespace {

using testing::DeviceValues;

std::vector<float> inputs(size_t n, uint32_t seed) {
  std::vector<float> x = testing::normal_values(n, seed, 0.0f, 3.0f);
  const float edges[] = {0.0f, -0.0f, 40.0f, -40.0f, 100.0f, -100.0f, 1e-30f, -1e-30f, 88.0f, -90.0f};
  for (size_t i = 0; i < sizeof(edges) / sizeof(float) && i < n; ++i) x[i] = edges[i];
  return x;
}

// The CPU's fp32 kernels for the best fused ISA, or null (the reason is printed).
const KernelTable* fused_cpu() {
  const std::vector<Isa> isas = testing::simd_isas();
  return isas.empty() ? nullptr : &cpu_kernels_for(isas.back());
}

// What the CPU's 16-bit table computes from fp32 results: one rounding to t.
std::vector<float> cpu_result(DType t, const std::vector<float>& y) { return testing::representable(t, y); }

TEST(CudaActivation, GeluMatchesTheCpuBitForBit) {
  ZT_REQUIRE_CUDA();
  const KernelTable* k = fused_cpu();
  if (k == nullptr) GTEST_SKIP() << "this CPU has no AVX2: no CPU kernel fuses multiply-adds as the GPU does";
  const size_t n = (1 << 20) + 3;
  for (DType t : {DType::kF32, DType::kBF16, DType::kF16}) {
    DeviceValues x(t, inputs(n, 1)), dy(t, inputs(n, 2)), y(t, std::vector<float>(n)), dx(t, std::vector<float>(n));
    cuda::gelu_forward(t, y.get(), x.get(), static_cast<int64_t>(n), nullptr);
    cuda::gelu_backward(t, dx.get(), x.get(), dy.get(), static_cast<int64_t>(n), nullptr);
    std::vector<float> ref_y(n), ref_dx(n);
    k->gelu_forward(ref_y.data(), x.host().data(), static_cast<int64_t>(n));
    k->gelu_backward(ref_dx.data(), x.host().data(), dy.host().data(), static_cast<int64_t>(n));
    EXPECT_TRUE(testing::same_bits(y.download(), cpu_result(t, ref_y))) << "forward " << dtype_name(t);
    EXPECT_TRUE(testing::same_bits(dx.download(), cpu_result(t, ref_dx))) << "backward " << dtype_name(t);
  }
}

TEST(CudaActivation, SwigluMatchesTheCpuBitForBit) {
  ZT_REQUIRE_CUDA();
  const KernelTable* k = fused_cpu();
  if (k == nullptr) GTEST_SKIP() << "this CPU has no AVX2: no CPU kernel fuses multiply-adds as the GPU does";
  const size_t n = (1 << 20) + 5;
  for (DType t : {DType::kF32, DType::kBF16, DType::kF16}) {
    DeviceValues g(t, inputs(n, 3)), u(t, inputs(n, 4)), dy(t, inputs(n, 5));
    DeviceValues y(t, std::vector<float>(n)), dg(t, std::vector<float>(n)), du(t, std::vector<float>(n));
    cuda::swiglu_forward(t, y.get(), g.get(), u.get(), static_cast<int64_t>(n), nullptr);
    cuda::swiglu_backward(t, dg.get(), du.get(), dy.get(), g.get(), u.get(), static_cast<int64_t>(n), nullptr);
    std::vector<float> ref_y(n), ref_dg(n), ref_du(n);
    k->swiglu_forward(ref_y.data(), g.host().data(), u.host().data(), static_cast<int64_t>(n));
    k->swiglu_backward(ref_dg.data(), ref_du.data(), dy.host().data(), g.host().data(), u.host().data(), static_cast<int64_t>(n));
    EXPECT_TRUE(testing::same_bits(y.download(), cpu_result(t, ref_y))) << "forward " << dtype_name(t);
    EXPECT_TRUE(testing::same_bits(dg.download(), cpu_result(t, ref_dg))) << "dgate " << dtype_name(t);
    EXPECT_TRUE(testing::same_bits(du.download(), cpu_result(t, ref_du))) << "dup " << dtype_name(t);
  }
}

TEST(CudaActivation, BackwardMayWriteOverItsGradientInput) {
  ZT_REQUIRE_CUDA();
  const size_t n = 4099;
  for (DType t : {DType::kF32, DType::kBF16}) {
    DeviceValues x(t, inputs(n, 6)), d(t, inputs(n, 7)), sep(t, inputs(n, 7)), ref(t, std::vector<float>(n));
    cuda::gelu_backward(t, ref.get(), x.get(), sep.get(), static_cast<int64_t>(n), nullptr);
    cuda::gelu_backward(t, d.get(), x.get(), d.get(), static_cast<int64_t>(n), nullptr);  // dinp = dout
    EXPECT_TRUE(testing::same_bits(d.download(), ref.download())) << dtype_name(t);
  }
}

}  // namespace
}  // namespace zt
