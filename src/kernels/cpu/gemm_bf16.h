// Mixed-precision GEMM for bf16 compute (issue 13's building block): bf16 operands,
// fp32 accumulation and fp32 output, C = alpha * op(A) op(B) + beta * C, row-major, through
// oneDNN's matmul primitive (AMX tiles where the CPU and OS enable them, AVX-512 BF16
// dot products where the CPU has them; where oneDNN has neither (oneDNN 2.6 on AVX2-only
// CPUs) the operands are widened to fp32 and the fp32 GEMM path runs them, which
// bf16_gemm_impl() names as "fp32 fallback"). Primitives are created once per shape and
// cached. dY^T X with more than 4,096 rows of C runs in blocks of rows where the library is
// AVX-512 BF16's (gemm_bf16.cc says why); every element is still one fp32 sum over K.
//
// Numerics: a product of two bf16 values (8-bit significands) is exact in fp32, so the
// result differs from an fp32 GEMM on the same (bf16-rounded) inputs only by the order of
// the fp32 accumulation: |C - C_ref| <= 2 * gamma_K * sum_k |a_ik b_kj| (gamma_K = K u /
// (1 - K u), u = 2^-24), which gemm_bf16_test.cc checks.
// Thread-safety: callable from several threads; the cache is locked.
#pragma once

#include <cstdint>
#include <string>

#include "tensor/dtype.h"
#include "core/status.h"
#include "kernels/kernel_args.h"

namespace zt {

// op(A): (M, K), op(B): (K, N), C: (M, N); lda/ldb/ldc are row strides in elements.
// A failure to create the primitive (an unsupported shape) aborts: shapes come from the
// model and are checked where it is built.
void gemm_bf16(Trans trans_a, Trans trans_b, int M, int N, int K, float alpha, const bf16_t* A, int lda,
               const bf16_t* B, int ldb, float beta, float* C, int ldc);

// The same with a bf16 destination, rounded once: C = round_bf16(op(A) op(B) + bias[n]
// + (accumulate ? C : 0)), the sum formed in fp32. bias: (N) fp32, may be null.
void gemm_bf16_out(Trans trans_a, Trans trans_b, int M, int N, int K, const bf16_t* A, int lda, const bf16_t* B,
                   int ldb, const float* bias, bool accumulate, bf16_t* C, int ldc);

// The fp32 fallback itself, which the two calls above run where oneDNN has no bf16 matmul
// (exposed for tests on any CPU). It streams at most chunk_floats widened values of an
// operand at a time: the rows of C (op(A) not transposed; the weight B is widened once),
// or the summation index K when op(A) is transposed and op(B) is not (the weight
// gradient dY^T X, whose K is the token count), so its scratch stays bounded for the LM
// head's 50304 columns. gemm_bf16_out_fallback requires op(A) not transposed.
constexpr int64_t kFallbackChunkFloats = int64_t{1} << 22;  // 16 MiB of fp32
void gemm_bf16_fallback(Trans trans_a, Trans trans_b, int M, int N, int K, float alpha, const bf16_t* A, int lda,
                        const bf16_t* B, int ldb, float beta, float* C, int ldc,
                        int64_t chunk_floats = kFallbackChunkFloats);
void gemm_bf16_out_fallback(Trans trans_a, Trans trans_b, int M, int N, int K, const bf16_t* A, int lda,
                            const bf16_t* B, int ldb, const float* bias, bool accumulate, bf16_t* C, int ldc,
                            int64_t chunk_floats = kFallbackChunkFloats);

// How gemm_bf16 runs the LM head's GEMMs here, for the banner and doctor: "" where they are
// one call each (AMX's kernel, or the fp32 fallback), else a phrase naming the blocks.
std::string bf16_vocabulary_blocks();

// oneDNN's implementation name for a bf16 matmul of this shape, e.g. "brg:avx512_core_amx"
// (AMX), "brg:avx512_core_bf16" (AVX-512 BF16), or "fp32 fallback (...)".
StatusOr<std::string> bf16_gemm_impl(int M, int N, int K);

}  // namespace zt
