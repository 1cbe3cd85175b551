// sgemm: dispatch to OpenBLAS's CBLAS or oneDNN by gemm_path(). oneDNN runs the forward
// pattern X W^T (outside parallel regions) as a cached matmul primitive, its brgemm on
// AVX-512, and the rest through dnnl_sgemm, its jit GEMM. Per pattern, each is the faster one
// (2 threads, Zen 5, 1,024 tokens of GPT-2 small, GFLOP/s): the forward's jit GEMM falls to
// 201 at the qkv shape (1,024 x 2,304 x 768; brgemm 337-348) and 273-302 at two MLP shapes
// (brgemm 357-362), level elsewhere; for dY W and dY^T X the brgemm fell behind instead (286-297
// against 370-383 at three of the eight shapes).
#include "kernels/cpu/gemm.h"

#include <cblas.h>
#include <dnnl.h>
#include <omp.h>

#include "kernels/cpu/gemm_path.h"
#include "kernels/cpu/onednn_matmul.h"

namespace zt {

static GemmLibrary library_for(Trans trans_b) {
  const GemmPath& p = gemm_path();
  // Per-head GEMMs, inside a parallel construct: the library runs them on this thread. The
  // level counts a team of one too (omp_in_parallel does not), so the library, and with it
  // the bits, do not depend on the thread count.
  if (omp_get_level() > 0) return p.inner;
  return trans_b == Trans::kYes ? p.forward : p.backward;
}

// The forward pattern's primitive (null where oneDNN has none, which the jit GEMM then runs).
static const OneDnnMatmul* forward_matmul(Trans trans_a, Trans trans_b, int M, int N, int K, float alpha, int lda,
                                          int ldb, float beta, int ldc) {
  if (trans_a == Trans::kYes || trans_b == Trans::kNo || omp_get_level() > 0) return nullptr;
  return onednn_matmul(MatmulKey{MatmulType::kF32, MatmulType::kF32, false, true, M, N, K, lda, ldb, ldc, alpha, beta});
}

void sgemm(Trans trans_a, Trans trans_b, int M, int N, int K, float alpha, const float* A, int lda,
           const float* B, int ldb, float beta, float* C, int ldc) {
  if (library_for(trans_b) == GemmLibrary::kOneDnn) {
    if (const OneDnnMatmul* m = forward_matmul(trans_a, trans_b, M, N, K, alpha, lda, ldb, beta, ldc)) {
      run_matmul(*m, A, B, nullptr, C);
      return;
    }
    dnnl_sgemm(trans_a == Trans::kYes ? 'T' : 'N', trans_b == Trans::kYes ? 'T' : 'N', M, N, K, alpha, A, lda, B, ldb,
               beta, C, ldc);
    return;
  }
  cblas_sgemm(CblasRowMajor, trans_a == Trans::kYes ? CblasTrans : CblasNoTrans,
              trans_b == Trans::kYes ? CblasTrans : CblasNoTrans, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

}  // namespace zt
