// sgemm through OpenBLAS's CBLAS interface.
#include "kernels/cpu/gemm.h"

#include <cblas.h>
#include <dnnl.h>
#include <omp.h>
#include <cstdlib>
#include <cstring>

#include <cstdio>
#include <string>

namespace zt {

enum class GemmPolicy { kMeasured, kOpenBlas, kOneDnn };

static GemmPolicy gemm_policy() {
  static const GemmPolicy p = [] {
    const char* e = std::getenv("ZT_GEMM");
    if (e == nullptr || std::strcmp(e, "auto") == 0) return GemmPolicy::kMeasured;
    if (std::strcmp(e, "openblas") == 0) return GemmPolicy::kOpenBlas;
    if (std::strcmp(e, "onednn") == 0) return GemmPolicy::kOneDnn;
    std::fprintf(stderr, "zerotrain: ZT_GEMM=%s: expected auto, openblas or onednn\n", e);
    std::exit(2);
  }();
  return p;
}

static bool use_onednn(Trans trans_b) {
  if (omp_in_parallel()) return false;  // per-head GEMMs inside a parallel loop: OpenBLAS runs them inline
  switch (gemm_policy()) {
    case GemmPolicy::kOpenBlas: return false;
    case GemmPolicy::kOneDnn: return true;
    case GemmPolicy::kMeasured: return trans_b == Trans::kNo;  // see the header comment
  }
  return false;
}

void sgemm(Trans trans_a, Trans trans_b, int M, int N, int K, float alpha, const float* A, int lda,
           const float* B, int ldb, float beta, float* C, int ldc) {
  if (use_onednn(trans_b)) {
    dnnl_sgemm(trans_a == Trans::kYes ? 'T' : 'N', trans_b == Trans::kYes ? 'T' : 'N', M, N, K, alpha, A, lda, B, ldb,
               beta, C, ldc);
    return;
  }
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
