// LayerNorm and RMSNorm on the GPU against the CPU kernels, in each CPU ISA's order this
// host has and in fp32, bf16 and f16 storage: outputs, mean/rstd and the accumulated
// input gradient bit for bit (the 16-bit tables widen, run the fp32 kernel and round once,
// which the test does by hand around the CPU's fp32 kernel); the weight and bias
// gradients, summed in another fixed order, within Higham's bound for recursive fp32
// summation of N + 1 terms, (N + 1) 2^-24 sum |terms|, of the exact (double) sums of the
// CPU's fp32 terms.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "kernels/cpu/kernel_table.h"
#include "kernels/cuda/norms.h"
#include "testing/cuda_test.h"

namespace zt {
namespace {

using testing::DeviceArray;
using testing::DeviceValues;
using testing::same_bits;
using testing::normal_values;

// Shapes: C = 771 leaves a tail for every lane width and no row 16-byte aligned; 768 gives
// aligned rows (the 16-byte staging and stores); 6,400 fp32 rows are too wide to stage
// (row_stage.cuh), so that shape runs the direct variant too.
struct Shape {
  int64_t N;
  int C;
};
constexpr Shape kShapes[] = {{300, 771}, {256, 768}, {24, 6400}};

// The parameter gradient's column sums: exact (double) from the CPU's fp32 terms, with
// the bound each GPU column must meet.
void expect_column_sums(const std::vector<float>& got, const std::vector<float>& start,
                        const std::vector<std::vector<float>>& terms, const char* what) {
  for (size_t c = 0; c < got.size(); ++c) {
    double exact = start[c], mag = std::fabs(start[c]);
    for (const std::vector<float>& row : terms) exact += row[c], mag += std::fabs(row[c]);
    const double bound = (terms.size() + 1) * std::ldexp(1.0, -24) * mag;
    ASSERT_LE(std::fabs(got[c] - exact), bound) << what << " column " << c;
  }
}

void check_layernorm(int64_t kN, int kC) {
  for (const auto& [isa, order] : testing::cpu_orders()) {
    const KernelTable& k = cpu_kernels_for(isa);
    for (DType t : {DType::kF32, DType::kBF16, DType::kF16}) {
      DeviceValues x(t, normal_values(kN * kC, 1, 0.5f, 2.0f)), w(t, normal_values(kC, 2, 1.0f, 0.2f)), b(t, normal_values(kC, 3, 0, 0.1f));
      DeviceValues y(t, std::vector<float>(kN * kC)), dy(t, normal_values(kN * kC, 4, 0, 1)), dx(t, normal_values(kN * kC, 5, 0, 1));
      DeviceArray<float> mean(kN), rstd(kN), dw(normal_values(kC, 6, 0, 1)), db(normal_values(kC, 7, 0, 1));
      DeviceArray<float> ws(static_cast<size_t>(cuda::norm_workspace_floats(kN, kC)));
      cuda::layernorm_forward(t, order, y.get(), mean.get(), rstd.get(), x.get(), w.get(), b.get(), kN, kC, nullptr);
      cuda::layernorm_backward(t, order, dx.get(), dw.get(), db.get(), dy.get(), x.get(), w.get(), mean.get(),
                               rstd.get(), kN, kC, ws.get(), nullptr);
      std::vector<float> ry(kN * kC), rm(kN), rr(kN), rdx = dx.host(), rdw(kC, 0.0f), rdb(kC, 0.0f);
      k.layernorm_forward(ry.data(), rm.data(), rr.data(), x.host().data(), w.host().data(), b.host().data(), kN, kC);
      k.layernorm_backward(rdx.data(), rdw.data(), rdb.data(), dy.host().data(), x.host().data(), w.host().data(),
                           rm.data(), rr.data(), kN, kC);
      const std::string what = std::string(isa_name(isa)) + " " + dtype_name(t) + " C " + std::to_string(kC);
      EXPECT_TRUE(same_bits(y.download(), testing::representable(t, ry))) << "out " << what;
      EXPECT_TRUE(same_bits(mean.download(), rm)) << "mean " << what;
      EXPECT_TRUE(same_bits(rstd.download(), rr)) << "rstd " << what;
      EXPECT_TRUE(same_bits(dx.download(), testing::representable(t, rdx))) << "dinp " << what;
      std::vector<std::vector<float>> tw(kN, std::vector<float>(kC)), tb = tw;
      for (int64_t r = 0; r < kN; ++r) {
        for (int c = 0; c < kC; ++c) {
          const float d = dy.host()[r * kC + c];
          tw[r][c] = d * ((x.host()[r * kC + c] - rm[r]) * rr[r]);
          tb[r][c] = d;
        }
      }
      expect_column_sums(dw.download(), normal_values(kC, 6, 0, 1), tw, ("dweight " + what).c_str());
      expect_column_sums(db.download(), normal_values(kC, 7, 0, 1), tb, ("dbias " + what).c_str());
    }
  }
}

void check_rmsnorm(int64_t kN, int kC) {
  const float eps = 1e-6f;
  for (const auto& [isa, order] : testing::cpu_orders()) {
    const KernelTable& k = cpu_kernels_for(isa);
    for (DType t : {DType::kF32, DType::kBF16, DType::kF16}) {
      DeviceValues x(t, normal_values(kN * kC, 11, 0.0f, 2.0f)), w(t, normal_values(kC, 12, 1.0f, 0.2f));
      DeviceValues y(t, std::vector<float>(kN * kC)), dy(t, normal_values(kN * kC, 14, 0, 1)), dx(t, normal_values(kN * kC, 15, 0, 1));
      DeviceArray<float> rstd(kN), dw(normal_values(kC, 16, 0, 1));
      DeviceArray<float> ws(static_cast<size_t>(cuda::norm_workspace_floats(kN, kC)));
      cuda::rmsnorm_forward(t, order, y.get(), rstd.get(), x.get(), w.get(), kN, kC, eps, nullptr);
      cuda::rmsnorm_backward(t, order, dx.get(), dw.get(), dy.get(), x.get(), w.get(), rstd.get(), kN, kC, ws.get(),
                             nullptr);
      std::vector<float> ry(kN * kC), rr(kN), rdx = dx.host(), rdw(kC, 0.0f);
      k.rmsnorm_forward(ry.data(), rr.data(), x.host().data(), w.host().data(), kN, kC, eps);
      k.rmsnorm_backward(rdx.data(), rdw.data(), dy.host().data(), x.host().data(), w.host().data(), rr.data(), kN, kC);
      const std::string what = std::string(isa_name(isa)) + " " + dtype_name(t) + " C " + std::to_string(kC);
      EXPECT_TRUE(same_bits(y.download(), testing::representable(t, ry))) << "out " << what;
      EXPECT_TRUE(same_bits(rstd.download(), rr)) << "rstd " << what;
      EXPECT_TRUE(same_bits(dx.download(), testing::representable(t, rdx))) << "dinp " << what;
      std::vector<std::vector<float>> tw(kN, std::vector<float>(kC));
      for (int64_t r = 0; r < kN; ++r) {
        for (int c = 0; c < kC; ++c) tw[r][c] = dy.host()[r * kC + c] * (x.host()[r * kC + c] * rr[r]);
      }
      expect_column_sums(dw.download(), normal_values(kC, 16, 0, 1), tw, ("dweight " + what).c_str());
    }
  }
}

TEST(CudaNorms, LayerNormMatchesTheCpuBitForBitAndItsParameterGradientsWithinTheSumBound) {
  ZT_REQUIRE_CUDA();
  for (const Shape& s : kShapes) check_layernorm(s.N, s.C);
}

TEST(CudaNorms, RmsNormMatchesTheCpuBitForBitAndItsWeightGradientWithinTheSumBound) {
  ZT_REQUIRE_CUDA();
  for (const Shape& s : kShapes) check_rmsnorm(s.N, s.C);
}

}  // namespace
}  // namespace zt
