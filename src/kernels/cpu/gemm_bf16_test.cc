// gemm_bf16 against an fp32 GEMM on the same bf16-rounded inputs, within the bound of
// gemm_bf16.h: products of bf16 values are exact in fp32, so the two differ only by the
// order of the fp32 accumulation, |C - C_ref| <= 2 gamma_K sum_k |a_ik b_kj|.
#include "kernels/cpu/gemm_bf16.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "kernels/cpu/elementwise.h"
#include "testing/bf16_values.h"
#include "testing/gradcheck.h"

namespace zt {
namespace {

using testing::random_bf16;

// Element (i, j) of op(X) for a row-major X with row stride ld.
float at(const std::vector<float>& x, bool trans, int i, int j, int ld) {
  return trans ? x[static_cast<size_t>(j) * ld + i] : x[static_cast<size_t>(i) * ld + j];
}

using Gemm = void (*)(Trans, Trans, int, int, int, float, const bf16_t*, int, const bf16_t*, int, float, float*, int);

// The fallback with a tiny chunk budget, so every path streams several chunks.
void fallback_in_chunks(Trans ta, Trans tb, int M, int N, int K, float alpha, const bf16_t* A, int lda,
                        const bf16_t* B, int ldb, float beta, float* C, int ldc) {
  gemm_bf16_fallback(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, 3000);
}

void check(bool ta, bool tb, int M, int N, int K, float alpha, float beta, Gemm gemm = &gemm_bf16) {
  const int lda = ta ? M : K, ldb = tb ? K : N, ldc = N;
  const testing::Bf16Values A = random_bf16(static_cast<size_t>(M) * K, 1), B = random_bf16(static_cast<size_t>(K) * N, 2);
  const std::vector<float> C0 = testing::random_vector(static_cast<size_t>(M) * N, 3);
  std::vector<float> C = C0;
  gemm(ta ? Trans::kYes : Trans::kNo, tb ? Trans::kYes : Trans::kNo, M, N, K, alpha, A.h.data(), lda, B.h.data(), ldb,
       beta, C.data(), ldc);
  const double u = std::ldexp(1.0, -24), gamma = (K + 2) * u / (1 - (K + 2) * u);
  double worst = 0.0;
  for (int i = 0; i < M; ++i) {
    for (int j = 0; j < N; ++j) {
      double ref = 0.0, mag = 0.0;
      for (int k = 0; k < K; ++k) {
        const double p = static_cast<double>(at(A.f, ta, i, k, lda)) * at(B.f, tb, k, j, ldb);
        ref += p;
        mag += std::fabs(p);
      }
      const double c0 = C0[static_cast<size_t>(i) * ldc + j];
      const double want = alpha * ref + beta * c0;
      // The exact result against fp32 accumulation, alpha/beta and the final rounding.
      const double bound = 2 * gamma * std::fabs(alpha) * mag + 2 * u * (std::fabs(want) + std::fabs(beta * c0));
      const double err = std::fabs(C[static_cast<size_t>(i) * ldc + j] - want);
      ASSERT_LE(err, bound) << "ta " << ta << " tb " << tb << " at (" << i << ", " << j << ")";
      worst = std::max(worst, err / std::max(bound, 1e-30));
    }
  }
  std::printf("  bf16 gemm %c%c %dx%dx%d: worst error %.1e of the bound\n", ta ? 'T' : 'N', tb ? 'T' : 'N', M, N, K,
              worst);
}

TEST(GemmBf16, MatchesFp32OnRoundedInputsWithinTheAccumulationBound) {
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) check(ta, tb, 37, 29, 300, 1.0f, 0.0f);
  }
  check(false, true, 64, 96, 768, 0.5f, 1.0f);  // the X W^T pattern with accumulation into C
  check(true, false, 48, 40, 1000, 1.0f, 1.0f);  // dY^T X into an existing gradient
}

// dY^T X with more output rows than one block (the LM head's weight gradient): where the
// library is not AMX's, it runs in row blocks of strided views of dY^T, the last one short.
TEST(GemmBf16, TheWeightGradientOfManyRowsMatchesInRowBlocks) {
  check(true, false, 2 * 4096 + 17, 24, 40, 1.0f, 1.0f);
}

using GemmOut = void (*)(Trans, Trans, int, int, int, const bf16_t*, int, const bf16_t*, int, const float*, bool,
                        bf16_t*, int);

void out_fallback_in_chunks(Trans ta, Trans tb, int M, int N, int K, const bf16_t* A, int lda, const bf16_t* B,
                            int ldb, const float* bias, bool accumulate, bf16_t* C, int ldc) {
  gemm_bf16_out_fallback(ta, tb, M, N, K, A, lda, B, ldb, bias, accumulate, C, ldc, 2000);
}

// The bf16 destination, A (M, K) B^T or B (K, N): bias and the old C summed in fp32 (when
// `accumulate`), one rounding.
void check_out(bool tb, int M, int N, int K, bool accumulate, GemmOut gemm) {
  const int ldb = tb ? K : N;
  const testing::Bf16Values A = random_bf16(static_cast<size_t>(M) * K, 4), B = random_bf16(static_cast<size_t>(N) * K, 5);
  const testing::Bf16Values C0 = random_bf16(static_cast<size_t>(M) * N, 6);
  const std::vector<float> bias = accumulate ? testing::random_vector(N, 7) : std::vector<float>(N, 0.0f);
  std::vector<bf16_t> C = C0.h;
  gemm(Trans::kNo, tb ? Trans::kYes : Trans::kNo, M, N, K, A.h.data(), K, B.h.data(), ldb,
       accumulate ? bias.data() : nullptr, accumulate, C.data(), N);
  std::vector<float> got(C.size());
  cast_bf16_to_f32(got.data(), C.data(), static_cast<int64_t>(C.size()));
  const double u = std::ldexp(1.0, -24), gamma = (K + 2) * u / (1 - (K + 2) * u);
  for (int i = 0; i < M; ++i) {
    for (int j = 0; j < N; ++j) {
      double want = accumulate ? C0.f[static_cast<size_t>(i) * N + j] + bias[static_cast<size_t>(j)] : 0.0;
      double mag = std::fabs(want);
      for (int k = 0; k < K; ++k) {
        const double p = static_cast<double>(A.f[static_cast<size_t>(i) * K + k]) * at(B.f, tb, k, j, ldb);
        want += p;
        mag += std::fabs(p);
      }
      // fp32 accumulation, then one bf16 rounding (unit roundoff 2^-8: 8 significand bits).
      const double bound = 2 * gamma * mag + std::ldexp(1.0, -8) * (std::fabs(want) + 2 * gamma * mag);
      ASSERT_LE(std::fabs(got[static_cast<size_t>(i) * N + j] - want), bound) << "(" << i << ", " << j << ")";
    }
  }
}

TEST(GemmBf16, FallbackInChunksMatchesWithinTheSameBound) {
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) check(ta, tb, 37, 29, 300, 1.0f, 0.0f, &fallback_in_chunks);
  }
  check(true, false, 48, 40, 1000, 1.0f, 1.0f, &fallback_in_chunks);  // K streamed: C accumulates per chunk
  check_out(true, 45, 31, 200, true, &out_fallback_in_chunks);  // rows in chunks
}

// dY W with a vocabulary-long K (the LM head's input gradient): where the library is not
// AMX's, K runs in blocks summed in fp32 and rounded once, the last block short.
TEST(GemmBf16, TheInputGradientOfAVocabularyMatchesInKBlocks) {
  check_out(false, 21, 24, 4 * 4096 + 4096 + 5, false, &gemm_bf16_out);
}

TEST(GemmBf16, NamesItsImplementation) {
  StatusOr<std::string> impl = bf16_gemm_impl(256, 768, 768);
  ASSERT_TRUE(impl.ok()) << impl.status().to_string();
  EXPECT_FALSE(impl->empty());
  std::printf("  oneDNN bf16 matmul implementation: %s\n", impl->c_str());
}

}  // namespace
}  // namespace zt
