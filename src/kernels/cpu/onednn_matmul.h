// oneDNN matmul primitives, created once per key and cached, for the GEMMs that run through
// oneDNN's primitive API: gemm_bf16 (bf16 operands) and sgemm's forward pattern X W^T
// (fp32; gemm.cc says why it leaves dnnl_sgemm there). Row-major
// C = alpha op(A) op(B) (+ bias[n]) (+ beta C).
// The caller's thread provides the scratchpad: the library's shared one is not safe when
// several threads (thread-ranks) run primitives at once.
// Thread-safety: the cache is locked; a cached primitive runs from any thread.
#pragma once

#include <compare>
#include <string>

namespace zt {

enum class MatmulType { kF32, kBf16 };

struct MatmulKey {
  MatmulType operands = MatmulType::kF32;     // A and B
  MatmulType destination = MatmulType::kF32;  // C
  bool ta = false, tb = false;
  int M = 0, N = 0, K = 0, lda = 0, ldb = 0, ldc = 0;  // op(A) (M, K), op(B) (K, N); row strides
  float alpha = 1.0f, beta = 0.0f;
  bool bias = false;  // an fp32 bias of N entries
  auto operator<=>(const MatmulKey&) const = default;
};

struct OneDnnMatmul;  // a created primitive (onednn_matmul.cc)

// The cached primitive for `k`, or null where oneDNN has none for it (oneDNN 2.6 has no
// bf16 matmul on a CPU without AVX-512 BF16 or AMX).
const OneDnnMatmul* onednn_matmul(const MatmulKey& k);

// oneDNN's implementation name, e.g. "brg:avx512_core_amx" or "gemm:jit".
const std::string& matmul_impl(const OneDnnMatmul& m);

// Runs it on the calling thread's scratchpad (bias: null unless the key has one). A failure
// aborts with oneDNN's message and the shape.
void run_matmul(const OneDnnMatmul& m, const void* A, const void* B, const float* bias, void* C);

}  // namespace zt
