// The CUDA device probe: without a GPU the reason is named (this runs everywhere, CI
// included); with one, the description names the card, its driver, runtime and
// libraries, and the measurements are positive and below physical limits.
#include <gtest/gtest.h>

#include <cstdio>

#include "backend/cuda/cuda_device.h"
#include "testing/cuda_test.h"

namespace zt {
namespace {

TEST(CudaDevice, WithoutAGpuTheReasonIsNamed) {
  const StatusOr<int> n = cuda_device_count();
  if (n.ok()) GTEST_SKIP() << "this machine has " << *n << " CUDA device(s)";
  EXPECT_EQ(n.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(n.status().message().rfind("no CUDA device: ", 0), 0u) << n.status().message();
  std::printf("  %s\n", n.status().message().c_str());
}

TEST(CudaDevice, VersionStringsFollowEachLibrarysEncoding) {
  EXPECT_EQ(cuda_version_string(13000), "13.0");
  EXPECT_EQ(cuda_version_string(12080), "12.8");
  EXPECT_EQ(cudnn_version_string(91900), "9.19.0");
  EXPECT_EQ(cublaslt_version_string(130100), "13.1.0");
  EXPECT_EQ(nccl_version_string(22809), "2.28.9");
}

TEST(CudaDevice, DescribesTheCardAndMeasuresIt) {
  ZT_REQUIRE_CUDA();
  const StatusOr<CudaDeviceInfo> info = cuda_device_info(0);
  ASSERT_TRUE(info.ok()) << info.status().to_string();
  std::printf("  %s\n", info->describe().c_str());
  EXPECT_FALSE(info->name.empty());
  EXPECT_GT(info->cublaslt_version, 0u) << info->cublaslt_error;
  const StatusOr<CudaMeasurement> m = measure_cuda_device(0);
  ASSERT_TRUE(m.ok()) << m.status().to_string();
  std::printf("  bf16 GEMM %d^3: %.1f TFLOP/s (%.0f%% of the %.1f dense peak); pinned H2D %.1f GB/s, D2H %.1f GB/s\n",
              m->gemm_n, m->bf16_gemm_tflops,
              info->dense_bf16_peak_tflops > 0 ? 100.0 * m->bf16_gemm_tflops / info->dense_bf16_peak_tflops : 0.0,
              info->dense_bf16_peak_tflops, m->h2d_gbs, m->d2h_gbs);
  EXPECT_GT(m->bf16_gemm_tflops, 1.0);
  if (info->dense_bf16_peak_tflops > 0) EXPECT_LT(m->bf16_gemm_tflops, info->dense_bf16_peak_tflops * 1.05);
  EXPECT_GT(m->h2d_gbs, 1.0);
  EXPECT_LT(m->h2d_gbs, 200.0);  // above any PCIe or C2C link we build for
  EXPECT_GT(m->d2h_gbs, 1.0);
}

}  // namespace
}  // namespace zt
