// LtGemm and the row-major linear helpers (gemm_lt.h).
#include "kernels/cuda/gemm_lt.h"

#include <cstdio>

#include "core/check.h"
#include "kernels/cuda/cublaslt_api.h"

namespace zt::cuda {

struct LtGemm::Plan {
  const CublasLtApi* lt = nullptr;
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr, d = nullptr;
  cublasLtMatmulAlgo_t algo{};
  ~Plan() {
    for (cublasLtMatrixLayout_t l : {a, b, c, d}) {
      if (l != nullptr) lt->layout_destroy(l);
    }
    if (desc != nullptr) lt->desc_destroy(desc);
  }
};

namespace {

const CublasLtApi& api() { return *cublaslt_api().value(); }  // loaded by LtGemm::create first

Status lt_status(cublasStatus_t s, const char* call) {
  if (s == CUBLAS_STATUS_SUCCESS) return Status::OK();
  return Status::Internal(std::string("cuBLASLt ") + call + ": " + api().status_string(s));
}

#define ZT_LT(call) ZT_RETURN_IF_ERROR(lt_status((call), #call))

cudaDataType_t cuda_type(DType t) {
  switch (t) {
    case DType::kF32: return CUDA_R_32F;
    case DType::kBF16: return CUDA_R_16BF;
    case DType::kF16: return CUDA_R_16F;
  }
  return CUDA_R_32F;
}

// The largest power of two (up to 256) dividing the address: cuBLASLt picks kernels by it.
uint32_t alignment(const void* p) {
  const uintptr_t u = reinterpret_cast<uintptr_t>(p);
  uint32_t a = 256;
  while (a > 1 && (u % a) != 0) a /= 2;
  return a;
}

std::string key_of(const Matmul& mm) {
  char buf[320];
  std::snprintf(buf, sizeof(buf), "%d%d %lld %lld %lld %d %d %lld %lld %lld %lld b%d %d %lld %lld %lld %lld a%u %u %u %u %u t%d",
                mm.trans_a, mm.trans_b, static_cast<long long>(mm.m), static_cast<long long>(mm.n),
                static_cast<long long>(mm.k), static_cast<int>(mm.ab), static_cast<int>(mm.cd),
                static_cast<long long>(mm.lda), static_cast<long long>(mm.ldb),
                static_cast<long long>(mm.C != nullptr ? mm.ldc : mm.ldd), static_cast<long long>(mm.ldd),
                mm.bias != nullptr, mm.batch, static_cast<long long>(mm.stride_a), static_cast<long long>(mm.stride_b),
                static_cast<long long>(mm.stride_c), static_cast<long long>(mm.stride_d), alignment(mm.A),
                alignment(mm.B), alignment(mm.C != nullptr ? mm.C : mm.D), alignment(mm.D),
                mm.bias != nullptr ? alignment(mm.bias) : 0u, mm.allow_tf32);
  return buf;
}

Status make_layout(cublasLtMatrixLayout_t* out, DType t, int64_t rows, int64_t cols, int64_t ld, int batch,
                   int64_t stride) {
  ZT_LT(api().layout_create(out, cuda_type(t), static_cast<uint64_t>(rows), static_cast<uint64_t>(cols), ld));
  if (batch > 1) {
    ZT_LT(api().layout_set(*out, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch, sizeof(batch)));
    ZT_LT(api().layout_set(*out, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof(stride)));
  }
  return Status::OK();
}

Status describe_matmul(const Matmul& mm, LtGemm::Plan* p) {
  const cublasComputeType_t compute =
      mm.ab == DType::kF32 && mm.allow_tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  ZT_LT(api().desc_create(&p->desc, compute, CUDA_R_32F));
  const cublasOperation_t ta = mm.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N, tb = mm.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  ZT_LT(api().desc_set(p->desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof(ta)));
  ZT_LT(api().desc_set(p->desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof(tb)));
  if (mm.bias != nullptr) {
    const cublasLtEpilogue_t epi = CUBLASLT_EPILOGUE_BIAS;
    const int32_t bias_type = cuda_type(mm.cd);
    ZT_LT(api().desc_set(p->desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof(epi)));
    ZT_LT(api().desc_set(p->desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bias_type, sizeof(bias_type)));
    ZT_LT(api().desc_set(p->desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &mm.bias, sizeof(mm.bias)));
  }
  ZT_RETURN_IF_ERROR(make_layout(&p->a, mm.ab, mm.trans_a ? mm.k : mm.m, mm.trans_a ? mm.m : mm.k, mm.lda, mm.batch,
                                 mm.stride_a));
  ZT_RETURN_IF_ERROR(make_layout(&p->b, mm.ab, mm.trans_b ? mm.n : mm.k, mm.trans_b ? mm.k : mm.n, mm.ldb, mm.batch,
                                 mm.stride_b));
  ZT_RETURN_IF_ERROR(make_layout(&p->c, mm.cd, mm.m, mm.n, mm.C != nullptr ? mm.ldc : mm.ldd, mm.batch,
                                 mm.C != nullptr ? mm.stride_c : mm.stride_d));
  return make_layout(&p->d, mm.cd, mm.m, mm.n, mm.ldd, mm.batch, mm.stride_d);
}

std::string problem(const Matmul& mm) {
  return std::string(dtype_name(mm.ab)) + " x " + dtype_name(mm.ab) + " -> " + dtype_name(mm.cd) + " m=" +
         std::to_string(mm.m) + " n=" + std::to_string(mm.n) + " k=" + std::to_string(mm.k) +
         (mm.batch > 1 ? " batch " + std::to_string(mm.batch) : "");
}

}  // namespace

StatusOr<std::unique_ptr<LtGemm>> LtGemm::create(size_t workspace_bytes) {
  ZT_RETURN_IF_ERROR(cublaslt_api().status());
  std::unique_ptr<LtGemm> g(new LtGemm());
  cublasLtHandle_t h = nullptr;
  ZT_LT(api().create(&h));
  g->handle_ = h;
  const cudaError_t e = cudaMalloc(&g->workspace_, workspace_bytes);
  if (e != cudaSuccess) {
    return Status::ResourceExhausted("cuBLASLt workspace of " + std::to_string(workspace_bytes) +
                                     " bytes: " + cudaGetErrorString(e));
  }
  g->workspace_bytes_ = workspace_bytes;
  return g;
}

LtGemm::~LtGemm() {
  plans_.clear();
  if (workspace_ != nullptr) cudaFree(workspace_);
  if (handle_ != nullptr) api().destroy(static_cast<cublasLtHandle_t>(handle_));
}

StatusOr<LtGemm::Plan*> LtGemm::plan_for(const Matmul& mm) {
  const std::string key = key_of(mm);
  auto it = plans_.find(key);
  if (it != plans_.end()) return it->second.get();
  auto p = std::make_unique<Plan>();
  p->lt = &api();
  ZT_RETURN_IF_ERROR(describe_matmul(mm, p.get()));
  cublasLtMatmulPreference_t pref = nullptr;
  ZT_LT(api().pref_create(&pref));
  const uint32_t schemes = CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE;  // split-K partials in fp32 only
  const uint32_t al[4] = {alignment(mm.A), alignment(mm.B), alignment(mm.C != nullptr ? mm.C : mm.D), alignment(mm.D)};
  const cublasLtMatmulPreferenceAttributes_t al_attr[4] = {
      CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
      CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES};
  Status s = lt_status(api().pref_set(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                            &workspace_bytes_, sizeof(workspace_bytes_)),
                       "preference workspace");
  if (s.ok()) {
    s = lt_status(api().pref_set(pref, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK, &schemes,
                                                       sizeof(schemes)),
                  "preference reduction scheme");
  }
  for (int i = 0; i < 4 && s.ok(); ++i) {
    s = lt_status(api().pref_set(pref, al_attr[i], &al[i], sizeof(al[i])), "preference alignment");
  }
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  if (s.ok()) {
    s = lt_status(api().heuristic(static_cast<cublasLtHandle_t>(handle_), p->desc, p->a, p->b, p->c,
                                                 p->d, pref, 1, &result, &found),
                  "heuristic");
  }
  api().pref_destroy(pref);
  ZT_RETURN_IF_ERROR(s);
  if (found == 0) return Status::Unimplemented("cuBLASLt has no algorithm for " + problem(mm));
  p->algo = result.algo;
  Plan* raw = p.get();
  plans_.emplace(key, std::move(p));
  return raw;
}

Status LtGemm::run(const Matmul& mm, cudaStream_t stream) {
  if (mm.C == nullptr && mm.beta != 0.0f) return Status::InvalidArgument("matmul: beta != 0 needs C");
  ZT_ASSIGN_OR_RETURN(Plan * p, plan_for(mm));
  if (mm.bias != nullptr) {
    ZT_LT(api().desc_set(p->desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &mm.bias, sizeof(mm.bias)));
  }
  const Status s = lt_status(api().matmul(static_cast<cublasLtHandle_t>(handle_), p->desc, &mm.alpha, mm.A, p->a,
                                            mm.B, p->b, &mm.beta, mm.C != nullptr ? mm.C : mm.D, p->c, mm.D, p->d,
                                            &p->algo, workspace_, workspace_bytes_, stream),
                             "matmul");
  if (!s.ok()) return Status(s.code(), s.message() + " (" + problem(mm) + ")");
  return Status::OK();
}

std::string LtGemm::describe() const {
  return "cuBLASLt " + std::to_string(api().get_version()) + ", " + std::to_string(workspace_bytes_ >> 20) +
         " MiB workspace, " + std::to_string(plans_.size()) + " problems planned";
}

Matmul column_major(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, DType ab, DType cd, const void* A,
                    int64_t lda, const void* B, int64_t ldb, void* D, int64_t ldd) {
  Matmul mm;
  mm.trans_a = trans_a;
  mm.trans_b = trans_b;
  mm.m = m;
  mm.n = n;
  mm.k = k;
  mm.ab = ab;
  mm.cd = cd;
  mm.A = A;
  mm.lda = lda;
  mm.B = B;
  mm.ldb = ldb;
  mm.D = D;
  mm.ldd = ldd;
  return mm;
}

Status linear_forward(LtGemm& lt, DType t, void* out, const void* inp, const void* weight, const void* bias,
                      const void* residual, int64_t N, int C, int OC, cudaStream_t stream) {
  // weight (OC, C) row-major is (C, OC) column-major: op(A) is its transpose.
  Matmul mm = column_major(true, false, OC, N, C, t, t, weight, C, inp, C, out, OC);
  mm.C = residual;
  mm.ldc = OC;
  mm.beta = residual != nullptr ? 1.0f : 0.0f;
  mm.bias = bias;
  return lt.run(mm, stream);
}

Status linear_backward_weights(LtGemm& lt, DType t, float* dweight, const void* dout, const void* inp, int64_t N,
                               int C, int OC, cudaStream_t stream) {
  // dweight^T (C, OC) += inp^T (C, N) . dout (N, OC)
  Matmul mm = column_major(false, true, C, OC, N, t, DType::kF32, inp, C, dout, OC, dweight, C);
  mm.C = dweight;
  mm.ldc = C;
  mm.beta = 1.0f;
  return lt.run(mm, stream);
}

Status linear_backward_input(LtGemm& lt, DType t, DType out, void* dinp, const void* dout, const void* weight,
                             int64_t N, int C, int OC, cudaStream_t stream) {
  // dinp^T (C, N) = weight^T (C, OC) . dout^T (OC, N)
  return lt.run(column_major(false, false, C, N, OC, t, out, weight, C, dout, OC, dinp, C), stream);
}

}  // namespace zt::cuda
