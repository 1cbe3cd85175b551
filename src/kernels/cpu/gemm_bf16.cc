// gemm_bf16 through oneDNN's matmul primitive (onednn_matmul.h: one primitive per shape, cached).
#include "kernels/cpu/gemm_bf16.h"

#include <algorithm>
#include <string>
#include <vector>

#include "core/check.h"
#include "kernels/cpu/elementwise.h"
#include "kernels/cpu/gemm.h"
#include "kernels/cpu/onednn_matmul.h"

namespace zt {

namespace {

int chunk_of(int64_t floats_per_row, int total, int64_t chunk_floats) {
  const int64_t rows = std::max<int64_t>(1, chunk_floats / std::max<int64_t>(1, floats_per_row));
  return static_cast<int>(std::min<int64_t>(rows, total));
}

std::vector<float> widened(const bf16_t* x, size_t n) {
  std::vector<float> out(n);
  cast_bf16_to_f32(out.data(), x, static_cast<int64_t>(n));
  return out;
}

// The fallback: the operands widened to fp32 (exact), then the fp32 GEMM path. The
// summation index K is streamed in chunks (C accumulates chunk after chunk, still one
// fp32 sum of the K products per output, in another order) when op(A) is transposed
// (the weight gradient dout^T x, whose K is the token count); otherwise the rows of C.
void widened_sgemm(Trans ta, Trans tb, int M, int N, int K, float alpha, const bf16_t* A, int lda, const bf16_t* B,
                   int ldb, float beta, float* C, int ldc, int64_t chunk_floats) {
  if (ta == Trans::kYes && tb == Trans::kNo) {  // A (K, M), B (K, N): chunks of K rows of both
    const int kk = chunk_of(static_cast<int64_t>(lda) + ldb, K, chunk_floats);
    for (int k0 = 0; k0 < K; k0 += kk) {
      const int n = std::min(kk, K - k0);
      const std::vector<float> a = widened(A + static_cast<size_t>(k0) * lda, static_cast<size_t>(n) * lda);
      const std::vector<float> b = widened(B + static_cast<size_t>(k0) * ldb, static_cast<size_t>(n) * ldb);
      sgemm(ta, tb, M, N, n, alpha, a.data(), lda, b.data(), ldb, k0 == 0 ? beta : 1.0f, C, ldc);
    }
    return;
  }
  const std::vector<float> b = widened(B, static_cast<size_t>(tb == Trans::kYes ? N : K) * ldb);
  if (ta == Trans::kYes) {
    const std::vector<float> a = widened(A, static_cast<size_t>(K) * lda);
    sgemm(ta, tb, M, N, K, alpha, a.data(), lda, b.data(), ldb, beta, C, ldc);
    return;
  }
  const int mm = chunk_of(lda, M, chunk_floats);  // rows of A and C
  for (int i0 = 0; i0 < M; i0 += mm) {
    const int n = std::min(mm, M - i0);
    const std::vector<float> a = widened(A + static_cast<size_t>(i0) * lda, static_cast<size_t>(n) * lda);
    sgemm(ta, tb, n, N, K, alpha, a.data(), lda, b.data(), ldb, beta, C + static_cast<size_t>(i0) * ldc, ldc);
  }
}

// The bf16-destination fallback: fp32 accumulator (the old C widened, the bias added
// first), one rounding at the end.
// Rows of C in chunks (op(A) not transposed: the forward and dinp GEMMs), the weight B
// widened once.
void widened_sgemm_out(Trans ta, Trans tb, int M, int N, int K, const bf16_t* A, int lda, const bf16_t* B, int ldb,
                       const float* bias, bool accumulate, bf16_t* C, int ldc, int64_t chunk_floats) {
  ZT_CHECK(ta == Trans::kNo, "bf16-destination fallback with a transposed A");
  const std::vector<float> b = widened(B, static_cast<size_t>(tb == Trans::kYes ? N : K) * ldb);
  const int mm = chunk_of(static_cast<int64_t>(lda) + N, M, chunk_floats);
  std::vector<float> a, c;
  for (int i0 = 0; i0 < M; i0 += mm) {
    const int n = std::min(mm, M - i0);
    c.assign(static_cast<size_t>(n) * N, 0.0f);
    for (int i = 0; i < n; ++i) {
      float* row = c.data() + static_cast<size_t>(i) * N;
      if (accumulate) cast_bf16_to_f32(row, C + static_cast<size_t>(i0 + i) * ldc, N);
      for (int j = 0; bias != nullptr && j < N; ++j) row[j] += bias[j];
    }
    a = widened(A + static_cast<size_t>(i0) * lda, static_cast<size_t>(n) * lda);
    sgemm(ta, tb, n, N, K, 1.0f, a.data(), lda, b.data(), ldb, 1.0f, c.data(), N);
    for (int i = 0; i < n; ++i) {
      cast_f32_to_bf16(C + static_cast<size_t>(i0 + i) * ldc, c.data() + static_cast<size_t>(i) * N, N);
    }
  }
}

// The cached primitive for `k`, or `fallback` where oneDNN has none.
template <typename Fallback>
void run(const MatmulKey& k, const void* A, const void* B, const float* bias, void* C, const Fallback& fallback) {
  const OneDnnMatmul* m = onednn_matmul(k);
  if (m == nullptr) {
    fallback();
    return;
  }
  run_matmul(*m, A, B, bias, C);
}

// A bf16 matmul's key; C fp32 or bf16.
MatmulKey bf16_key(Trans ta, Trans tb, int M, int N, int K, int lda, int ldb, int ldc, float alpha, float beta,
                   bool bf16_out, bool bias) {
  return MatmulKey{MatmulType::kBf16, bf16_out ? MatmulType::kBf16 : MatmulType::kF32, ta == Trans::kYes,
                   tb == Trans::kYes, M, N, K, lda, ldb, ldc, alpha, beta, bias};
}

// The weight gradient dY^T X of a layer with many output rows (the LM head: M = the
// vocabulary) runs in blocks of kWeightGradRows rows of C where oneDNN's bf16 matmul is
// its AVX-512 BF16 brgemm. On the whole shape that brgemm picks an M blocking that runs at
// about half its rate for some M: 342-367 GFLOP/s at M = 50,257 (GPT-2's vocabulary),
// 545 at 50,256, 597-633 at 50,240 and 50,304 (N 768, K 1,024, 2 threads, Zen 5). A block
// is a strided view of dY^T (lda > rows), which oneDNN gives to its jit GEMM: 645-706
// GFLOP/s at K 256, 1,024 and 8,192. On AMX the whole shape stays with the AMX brgemm.
// Each element is still one fp32 sum over K (gemm_bf16.h's bound); blocks cover disjoint
// rows, so the result does not depend on their order.
constexpr int kWeightGradRows = 4096;

// oneDNN runs k, and not on AMX tiles.
bool onednn_without_amx(const MatmulKey& k) {
  const OneDnnMatmul* m = onednn_matmul(k);
  return m != nullptr && matmul_impl(*m).find("amx") == std::string::npos;
}

bool in_row_blocks(const MatmulKey& k) {
  if (!k.ta || k.tb || k.destination == MatmulType::kBf16 || k.bias || k.M <= kWeightGradRows) return false;
  return onednn_without_amx(k);
}

// The input gradient dY W of the LM head (K = the vocabulary, longer than kVocabularyK)
// the same way, without AMX: blocks of kWeightGradRows along K (each a strided view of dY),
// summed in an fp32 block of rows of C that is rounded to bf16 once, at the end. GPT-2's
// 1,024 x 768 x 50,257 137.6 -> 109.1 ms, 32,000 long 82.6 -> 69.4 (2 threads, Zen 5); at
// K 11,008 (a 7B model's MLP) the two ran level, so shorter sums keep the one call.
constexpr int kVocabularyK = 16384;

bool in_k_blocks(const MatmulKey& k) {
  if (k.ta || k.tb || k.destination != MatmulType::kBf16 || k.bias || k.beta != 0.0f || k.K <= kVocabularyK) {
    return false;
  }
  return onednn_without_amx(k);
}

// C (M, N) = round_bf16(A (M, K) B (K, N)), K in blocks into a per-thread fp32 block of C's
// rows (kept: freeing it would fault its pages in again on every call).
void out_in_k_blocks(int M, int N, int K, const bf16_t* A, int lda, const bf16_t* B, int ldb, bf16_t* C, int ldc) {
  thread_local std::vector<float> acc;
  acc.resize(static_cast<size_t>(std::min(M, kWeightGradRows)) * N);
  for (int i0 = 0; i0 < M; i0 += kWeightGradRows) {
    const int m = std::min(kWeightGradRows, M - i0);
    const bf16_t* a = A + static_cast<size_t>(i0) * lda;
    for (int k0 = 0; k0 < K; k0 += kWeightGradRows) {
      gemm_bf16(Trans::kNo, Trans::kNo, m, N, std::min(kWeightGradRows, K - k0), 1.0f, a + k0, lda,
                B + static_cast<size_t>(k0) * ldb, ldb, k0 == 0 ? 0.0f : 1.0f, acc.data(), N);
    }
    for (int i = 0; i < m; ++i) {
      cast_f32_to_bf16(C + static_cast<size_t>(i0 + i) * ldc, acc.data() + static_cast<size_t>(i) * N, N);
    }
  }
}

}  // namespace

void gemm_bf16_out(Trans trans_a, Trans trans_b, int M, int N, int K, const bf16_t* A, int lda, const bf16_t* B,
                   int ldb, const float* bias, bool accumulate, bf16_t* C, int ldc) {
  const MatmulKey whole =
      bf16_key(trans_a, trans_b, M, N, K, lda, ldb, ldc, 1.0f, accumulate ? 1.0f : 0.0f, true, bias != nullptr);
  if (in_k_blocks(whole)) {
    out_in_k_blocks(M, N, K, A, lda, B, ldb, C, ldc);
    return;
  }
  run(whole, A, B, bias, C, [&] {
        widened_sgemm_out(trans_a, trans_b, M, N, K, A, lda, B, ldb, bias, accumulate, C, ldc, kFallbackChunkFloats);
      });
}

void gemm_bf16(Trans trans_a, Trans trans_b, int M, int N, int K, float alpha, const bf16_t* A, int lda,
               const bf16_t* B, int ldb, float beta, float* C, int ldc) {
  const MatmulKey whole = bf16_key(trans_a, trans_b, M, N, K, lda, ldb, ldc, alpha, beta, false, false);
  if (in_row_blocks(whole)) {
    for (int i0 = 0; i0 < M; i0 += kWeightGradRows) {
      const int m = std::min(kWeightGradRows, M - i0);
      MatmulKey part = whole;
      part.M = m;
      run(part, A + i0, B, nullptr, C + static_cast<size_t>(i0) * ldc, [&] {
        widened_sgemm(trans_a, trans_b, m, N, K, alpha, A + i0, lda, B, ldb, beta, C + static_cast<size_t>(i0) * ldc,
                      ldc, kFallbackChunkFloats);
      });
    }
    return;
  }
  run(whole, A, B, nullptr, C, [&] {
    widened_sgemm(trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, kFallbackChunkFloats);
  });
}

void gemm_bf16_fallback(Trans trans_a, Trans trans_b, int M, int N, int K, float alpha, const bf16_t* A, int lda,
                        const bf16_t* B, int ldb, float beta, float* C, int ldc, int64_t chunk_floats) {
  widened_sgemm(trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, chunk_floats);
}

void gemm_bf16_out_fallback(Trans trans_a, Trans trans_b, int M, int N, int K, const bf16_t* A, int lda,
                            const bf16_t* B, int ldb, const float* bias, bool accumulate, bf16_t* C, int ldc,
                            int64_t chunk_floats) {
  widened_sgemm_out(trans_a, trans_b, M, N, K, A, lda, B, ldb, bias, accumulate, C, ldc, chunk_floats);
}

std::string bf16_vocabulary_blocks() {
  const int M = kWeightGradRows + 1, N = 768, K = 1024;  // a weight gradient just over one block
  if (!in_row_blocks(bf16_key(Trans::kYes, Trans::kNo, M, N, K, M, N, N, 1.0f, 1.0f, false, false))) return "";
  const std::string rows = std::to_string(kWeightGradRows);
  return "dY^T.X over more than " + rows + " rows and dY.W over K above " + std::to_string(kVocabularyK) +
         " in blocks of " + rows;
}

StatusOr<std::string> bf16_gemm_impl(int M, int N, int K) {
  const OneDnnMatmul* m = onednn_matmul(bf16_key(Trans::kNo, Trans::kYes, M, N, K, K, K, N, 1.0f, 0.0f, false, false));
  return m != nullptr ? matmul_impl(*m) : std::string("fp32 fallback (oneDNN has no bf16 matmul on this CPU)");
}

}  // namespace zt
