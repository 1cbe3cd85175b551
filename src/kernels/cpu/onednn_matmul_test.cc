// The oneDNN matmul cache: one primitive per key, and the fp32 forward pattern X W^T with
// alpha and beta against a double reference within the fp32 accumulation bound
// |C - C_ref| <= gamma_(K+2) (|alpha| sum_k |x_ik w_jk| + |beta c_ij|), gamma_n = n u / (1 - n u).
#include "kernels/cpu/onednn_matmul.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "testing/gradcheck.h"

namespace zt {
namespace {

MatmulKey forward_key(int M, int N, int K, float alpha, float beta) {
  return MatmulKey{MatmulType::kF32, MatmulType::kF32, false, true, M, N, K, K, K, N, alpha, beta};
}

TEST(OneDnnMatmul, OnePrimitivePerKey) {
  const OneDnnMatmul* a = onednn_matmul(forward_key(8, 16, 32, 1.0f, 0.0f));
  ASSERT_NE(a, nullptr) << "oneDNN has an fp32 matmul on every x86-64 CPU";
  EXPECT_EQ(onednn_matmul(forward_key(8, 16, 32, 1.0f, 0.0f)), a);
  EXPECT_NE(onednn_matmul(forward_key(8, 16, 32, 1.0f, 1.0f)), a);
  EXPECT_NE(onednn_matmul(forward_key(9, 16, 32, 1.0f, 0.0f)), a);
  EXPECT_FALSE(matmul_impl(*a).empty());
}

TEST(OneDnnMatmul, ForwardPatternWithScaleAndAccumulationWithinTheBound) {
  const int M = 37, N = 45, K = 300;
  const float alpha = 0.5f, beta = 1.0f;
  const std::vector<float> X = testing::random_vector(static_cast<size_t>(M) * K, 1);
  const std::vector<float> W = testing::random_vector(static_cast<size_t>(N) * K, 2);
  const std::vector<float> C0 = testing::random_vector(static_cast<size_t>(M) * N, 3);
  std::vector<float> C = C0;
  run_matmul(*onednn_matmul(forward_key(M, N, K, alpha, beta)), X.data(), W.data(), nullptr, C.data());
  const double u = std::ldexp(1.0, -24), gamma = (K + 2) * u / (1 - (K + 2) * u);
  for (int i = 0; i < M; ++i) {
    for (int j = 0; j < N; ++j) {
      double dot = 0, mag = 0;
      for (int k = 0; k < K; ++k) {
        const double p = static_cast<double>(X[static_cast<size_t>(i) * K + k]) * W[static_cast<size_t>(j) * K + k];
        dot += p;
        mag += std::fabs(p);
      }
      const double c0 = C0[static_cast<size_t>(i) * N + j], want = alpha * dot + beta * c0;
      const double bound = gamma * (alpha * mag + std::fabs(beta * c0));
      ASSERT_LE(std::fabs(C[static_cast<size_t>(i) * N + j] - want), bound) << "(" << i << ", " << j << ")";
    }
  }
}

}  // namespace
}  // namespace zt
