// Row-major single-precision GEMM, C = alpha * op(A) * op(B) + beta * C, through
// OpenBLAS (OpenMP build) or oneDNN as gemm_path() decides per shape class (see
// gemm_path.h: OpenBLAS for X W^T and oneDNN for the backward patterns when OpenBLAS's
// core is sound, oneDNN for everything when it is not; oneDNN's X W^T is its matmul
// primitive, gemm.cc says why). Both libraries are deterministic for a fixed thread count.
// Called from inside an OpenMP parallel region (the per-head attention GEMMs) the call runs
// on the calling thread only.
#pragma once

#include "kernels/kernel_args.h"

namespace zt {

// op(A): (M, K), op(B): (K, N), C: (M, N); lda/ldb/ldc are row strides in elements.
void sgemm(Trans trans_a, Trans trans_b, int M, int N, int K, float alpha, const float* A, int lda,
           const float* B, int ldb, float beta, float* C, int ldc);

}  // namespace zt
