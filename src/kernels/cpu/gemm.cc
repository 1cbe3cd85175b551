// sgemm through OpenBLAS's CBLAS interface.
#include "kernels/cpu/gemm.h"

#include <cblas.h>
#include <omp.h>

#include <cstdio>
#include <string>

namespace zt {

void sgemm(Trans trans_a, Trans trans_b, int M, int N, int K, float alpha, const float* A, int lda,
           const float* B, int ldb, float beta, float* C, int ldc) {
  cblas_sgemm(CblasRowMajor, trans_a == Trans::kYes ? CblasTrans : CblasNoTrans,
              trans_b == Trans::kYes ? CblasTrans : CblasNoTrans, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

void set_num_threads(int threads) {
  omp_set_num_threads(threads);
  openblas_set_num_threads(threads);
}

int num_threads() { return omp_get_max_threads(); }

const char* blas_description() {
  static const std::string desc = std::string(openblas_get_config()) + " core=" + openblas_get_corename();
  return desc.c_str();
}

}  // namespace zt
