// gemm_bf16 through oneDNN's matmul primitive, one primitive per shape (cached).
#include "kernels/cpu/gemm_bf16.h"

#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "core/check.h"
#include "kernels/cpu/elementwise.h"
#include "kernels/cpu/gemm.h"

namespace zt {

namespace {

using dt = dnnl::memory::data_type;
using Key = std::tuple<bool, bool, int, int, int, int, int, int, float, float>;

struct Gemm {
  dnnl::memory::desc a, b, c;
  dnnl::matmul prim;
  bool fallback = false;  // oneDNN has no bf16 matmul here: widen to fp32 and sgemm
  std::string impl;
};

dnnl::engine& cpu_engine() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

// A row-major (rows, cols) matrix with row stride ld, or its transpose when `trans`.
dnnl::memory::desc matrix(bool trans, int rows, int cols, int ld, dt type) {
  const dnnl::memory::dims strides = trans ? dnnl::memory::dims{1, ld} : dnnl::memory::dims{ld, 1};
  return dnnl::memory::desc({rows, cols}, type, strides);
}

std::unique_ptr<Gemm> make_gemm(const Key& k) {
  const auto [ta, tb, M, N, K, lda, ldb, ldc, alpha, beta] = k;
  auto g = std::make_unique<Gemm>();
  g->a = matrix(ta, M, K, lda, dt::bf16);
  g->b = matrix(tb, K, N, ldb, dt::bf16);
  g->c = dnnl::memory::desc({M, N}, dt::f32, dnnl::memory::dims{ldc, 1});
  dnnl::primitive_attr attr;
  if (alpha != 1.0f) attr.set_output_scales(0, {alpha});
  if (beta != 0.0f) {
    dnnl::post_ops ops;
    ops.append_sum(beta);
    attr.set_post_ops(ops);
  }
  try {
    const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(g->a, g->b, g->c), attr, cpu_engine());
    g->impl = pd.impl_info_str();
    g->prim = dnnl::matmul(pd);
  } catch (const dnnl::error&) {
    g->fallback = true;  // oneDNN 2.6 has no bf16 matmul without AVX-512 BF16 or AMX
    g->impl = "fp32 fallback (oneDNN has no bf16 matmul on this CPU)";
  }
  return g;
}

const Gemm& gemm_for(const Key& k) {
  static std::mutex mu;
  static std::map<Key, std::unique_ptr<Gemm>> cache;
  std::lock_guard<std::mutex> lock(mu);
  std::unique_ptr<Gemm>& g = cache[k];
  if (g == nullptr) g = make_gemm(k);
  return *g;
}

// The fallback: the operands widened to fp32 (exact), then the fp32 GEMM path.
void widened_sgemm(Trans ta, Trans tb, int M, int N, int K, float alpha, const bf16_t* A, int lda, const bf16_t* B,
                   int ldb, float beta, float* C, int ldc) {
  const size_t a_n = static_cast<size_t>(ta == Trans::kYes ? K : M) * lda;
  const size_t b_n = static_cast<size_t>(tb == Trans::kYes ? N : K) * ldb;
  std::vector<float> a(a_n), b(b_n);
  cast_bf16_to_f32(a.data(), A, static_cast<int64_t>(a_n));
  cast_bf16_to_f32(b.data(), B, static_cast<int64_t>(b_n));
  sgemm(ta, tb, M, N, K, alpha, a.data(), lda, b.data(), ldb, beta, C, ldc);
}

}  // namespace

void gemm_bf16(Trans trans_a, Trans trans_b, int M, int N, int K, float alpha, const bf16_t* A, int lda,
               const bf16_t* B, int ldb, float beta, float* C, int ldc) {
  const Key key{trans_a == Trans::kYes, trans_b == Trans::kYes, M, N, K, lda, ldb, ldc, alpha, beta};
  try {
    const Gemm& g = gemm_for(key);
    if (g.fallback) {
      widened_sgemm(trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
      return;
    }
    dnnl::engine& eng = cpu_engine();
    dnnl::stream stream(eng);
    g.prim.execute(stream, {{DNNL_ARG_SRC, dnnl::memory(g.a, eng, const_cast<bf16_t*>(A))},
                            {DNNL_ARG_WEIGHTS, dnnl::memory(g.b, eng, const_cast<bf16_t*>(B))},
                            {DNNL_ARG_DST, dnnl::memory(g.c, eng, C)}});
    stream.wait();
  } catch (const dnnl::error& e) {
    ZT_CHECK(false, "oneDNN bf16 matmul %d x %d x %d failed: %s", M, N, K, e.what());
  }
}

StatusOr<std::string> bf16_gemm_impl(int M, int N, int K) {
  try {
    return gemm_for(Key{false, true, M, N, K, K, K, N, 1.0f, 0.0f}).impl;
  } catch (const dnnl::error& e) {
    return Status::Internal(std::string("oneDNN failed to create a bf16 matmul: ") + e.what());
  }
}

}  // namespace zt
