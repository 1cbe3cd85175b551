// sgemm: dispatch to OpenBLAS's CBLAS or oneDNN's dnnl_sgemm by gemm_path().
#include "kernels/cpu/gemm.h"

#include <cblas.h>
#include <dnnl.h>
#include <omp.h>

#include "kernels/cpu/gemm_path.h"

namespace zt {

static GemmLibrary library_for(Trans trans_b) {
  const GemmPath& p = gemm_path();
  // Per-head GEMMs, inside a parallel construct: the library runs them on this thread. The
  // level counts a team of one too (omp_in_parallel does not), so the library, and with it
  // the bits, do not depend on the thread count.
  if (omp_get_level() > 0) return p.inner;
  return trans_b == Trans::kYes ? p.forward : p.backward;
}

void sgemm(Trans trans_a, Trans trans_b, int M, int N, int K, float alpha, const float* A, int lda,
           const float* B, int ldb, float beta, float* C, int ldc) {
  if (library_for(trans_b) == GemmLibrary::kOneDnn) {
    dnnl_sgemm(trans_a == Trans::kYes ? 'T' : 'N', trans_b == Trans::kYes ? 'T' : 'N', M, N, K, alpha, A, lda, B, ldb,
               beta, C, ldc);
    return;
  }
  cblas_sgemm(CblasRowMajor, trans_a == Trans::kYes ? CblasTrans : CblasNoTrans,
              trans_b == Trans::kYes ? CblasTrans : CblasNoTrans, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

}  // namespace zt
