// Row-major single-precision GEMM, C = alpha * op(A) * op(B) + beta * C, through
// OpenBLAS (OpenMP build) or oneDNN, whichever measured faster for the call's shape on
// the AVX-512 machines we benchmark (bench/RESULTS.md): OpenBLAS for the forward
// pattern X W^T (op(B) transposed), oneDNN for the backward patterns dY W and dY^T X.
// ZT_GEMM=openblas|onednn|auto overrides. Both are deterministic for a fixed thread
// count. Called from inside an OpenMP parallel region it always uses OpenBLAS, which
// then runs on the calling thread only (the per-head attention GEMMs rely on this).
#pragma once

namespace zt {

enum class Trans { kNo, kYes };

// op(A): (M, K), op(B): (K, N), C: (M, N); lda/ldb/ldc are row strides in elements.
void sgemm(Trans trans_a, Trans trans_b, int M, int N, int K, float alpha, const float* A, int lda,
           const float* B, int ldb, float beta, float* C, int ldc);

// Sets the thread count for OpenMP kernels and for the BLAS.
void set_num_threads(int threads);
int num_threads();

// "OpenBLAS 0.3.21 (Cooperlake)": for reports.
const char* blas_description();

}  // namespace zt
