// Every GEMM of zerotrain's CUDA backend goes through cuBLASLt (LtGemm; the library is
// loaded at LtGemm::create, cublaslt_api.h): 16-bit or fp32
// inputs, fp32 accumulation (CUBLAS_COMPUTE_32F: true fp32, never TF32 unless asked),
// the bias added in the epilogue and the residual as C with beta = 1, so each output
// element is rounded once, as the CPU's linear_forward contract says.
// Determinism: cuBLASLt gives the same bits run to run for one algorithm, workspace and
// GPU (cuBLAS docs, "Results reproducibility"). The algorithm of each problem is chosen
// once (the heuristic's first answer) and cached; split-K is allowed only with fp32
// partials (CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE), never through a 16-bit output buffer,
// which would round the partial sums.
// Layout: cuBLASLt's column-major view of zerotrain's row-major tensors (a row-major
// (R, C) matrix is a column-major (C, R) one), done once in the row-major helpers
// linear_forward / linear_backward_weights / linear_backward_input.
// Thread-safety: one LtGemm per stream user; not thread-safe (the cache is unguarded).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <tuple>

#include "tensor/dtype.h"
#include "core/status.h"

namespace zt::cuda {

// One column-major matmul D = alpha op(A) op(B) + beta C (+ bias per row of D), cuBLAS
// style: op(A) is m x k, op(B) k x n, C and D m x n. batch > 1: strided batches.
struct Matmul {
  bool trans_a = false, trans_b = false;
  int64_t m = 0, n = 0, k = 0;
  DType ab = DType::kF32;  // A and B
  DType cd = DType::kF32;  // C, D and the bias
  const void* A = nullptr;
  int64_t lda = 0;
  const void* B = nullptr;
  int64_t ldb = 0;
  const void* C = nullptr;  // null: beta must be 0 (D is used as C)
  int64_t ldc = 0;
  void* D = nullptr;
  int64_t ldd = 0;
  float alpha = 1.0f, beta = 0.0f;
  const void* bias = nullptr;  // m elements of type cd, added to every column of D
  int batch = 1;
  int64_t stride_a = 0, stride_b = 0, stride_c = 0, stride_d = 0;
  bool allow_tf32 = false;  // fp32 inputs only: CUBLAS_COMPUTE_32F_FAST_TF32
};

class LtGemm {
 public:
  // A cuBLASLt handle and a workspace of workspace_bytes on the current device.
  static StatusOr<std::unique_ptr<LtGemm>> create(size_t workspace_bytes = size_t{32} << 20);
  ~LtGemm();
  LtGemm(const LtGemm&) = delete;
  LtGemm& operator=(const LtGemm&) = delete;

  // Enqueues mm on stream. Fails (InvalidArgument / Unimplemented) naming the problem if
  // cuBLASLt has no algorithm for it, or with cuBLASLt's status string.
  Status run(const Matmul& mm, cudaStream_t stream);
  // "cuBLASLt 130100, 32 MiB workspace, N problems cached".
  std::string describe() const;

  struct Plan;  // descriptors and the chosen algorithm of one problem shape

 private:
  LtGemm() = default;
  StatusOr<Plan*> plan_for(const Matmul& mm);

  void* handle_ = nullptr;  // cublasLtHandle_t
  void* workspace_ = nullptr;
  size_t workspace_bytes_ = 0;
  std::map<std::string, std::unique_ptr<Plan>> plans_;
};

// A Matmul from the fields every product sets (the rest keep their defaults: no C, no
// bias, alpha 1, beta 0, one batch).
Matmul column_major(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, DType ab, DType cd, const void* A,
                    int64_t lda, const void* B, int64_t ldb, void* D, int64_t ldd);

// Row-major helpers in the kernel table's terms (kernels/activation_ops.h), t the storage
// type of activations and weights:
// out (N, OC) = residual (may be null) + bias (may be null) + inp (N, C) @ weight (OC, C)^T.
Status linear_forward(LtGemm& lt, DType t, void* out, const void* inp, const void* weight, const void* bias,
                      const void* residual, int64_t N, int C, int OC, cudaStream_t stream);
// dweight (OC, C) fp32 += dout (N, OC)^T @ inp (N, C).
Status linear_backward_weights(LtGemm& lt, DType t, float* dweight, const void* dout, const void* inp, int64_t N,
                               int C, int OC, cudaStream_t stream);
// dinp (N, C) = dout (N, OC) @ weight (OC, C), stored as `out` (t, or kF32 for the
// tensor-parallel partial).
Status linear_backward_input(LtGemm& lt, DType t, DType out, void* dinp, const void* dout, const void* weight,
                             int64_t N, int C, int OC, cudaStream_t stream);

}  // namespace zt::cuda
