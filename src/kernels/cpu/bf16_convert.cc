// The bulk bf16 casts (bf16_convert.h).
#include "kernels/cpu/bf16_convert.h"

#include <immintrin.h>

// GCC 12 warns inside its own AVX-512 intrinsics (the undefined source of _mm512_set1_epi32
// and friends); kernels_avx512.cc is built with the same warning off.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include "core/cpu_features.h"
#include "core/half_bits.h"
#include "kernels/cpu/cast_blocks.h"

namespace zt {

namespace bf16_detail {

void narrow_scalar(uint16_t* dst, const float* src, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = f32_to_bf16_bits(src[i]);
}

void widen_scalar(float* dst, const uint16_t* src, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = bf16_bits_to_f32(src[i]);
}

__attribute__((target("avx2"))) void narrow_avx2(uint16_t* dst, const float* src, int64_t n) {
  const __m256i abs = _mm256_set1_epi32(0x7fffffff), inf = _mm256_set1_epi32(0x7f800000);
  const __m256i bias = _mm256_set1_epi32(0x7fff), one = _mm256_set1_epi32(1), quiet = _mm256_set1_epi32(0x40);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256i u = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i));
    const __m256i hi = _mm256_srli_epi32(u, 16);
    const __m256i nan = _mm256_cmpgt_epi32(_mm256_and_si256(u, abs), inf);  // both sides below 2^31
    const __m256i rounded = _mm256_srli_epi32(_mm256_add_epi32(_mm256_add_epi32(u, bias), _mm256_and_si256(hi, one)), 16);
    const __m256i r = _mm256_blendv_epi8(rounded, _mm256_or_si256(hi, quiet), nan);
    const __m128i packed = _mm_packus_epi32(_mm256_castsi256_si128(r), _mm256_extracti128_si256(r, 1));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i), packed);
  }
  narrow_scalar(dst + i, src + i, n - i);
}

__attribute__((target("avx2"))) void widen_avx2(float* dst, const uint16_t* src, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256i w = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i)));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + i), _mm256_slli_epi32(w, 16));
  }
  widen_scalar(dst + i, src + i, n - i);
}

__attribute__((target("avx512f"))) void narrow_avx512(uint16_t* dst, const float* src, int64_t n) {
  const __m512i abs = _mm512_set1_epi32(0x7fffffff), inf = _mm512_set1_epi32(0x7f800000);
  const __m512i bias = _mm512_set1_epi32(0x7fff), one = _mm512_set1_epi32(1), quiet = _mm512_set1_epi32(0x40);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512i u = _mm512_loadu_si512(src + i);
    const __m512i hi = _mm512_srli_epi32(u, 16);
    const __mmask16 nan = _mm512_cmpgt_epu32_mask(_mm512_and_si512(u, abs), inf);
    const __m512i rounded = _mm512_srli_epi32(_mm512_add_epi32(_mm512_add_epi32(u, bias), _mm512_and_si512(hi, one)), 16);
    const __m512i r = _mm512_mask_blend_epi32(nan, rounded, _mm512_or_si512(hi, quiet));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + i), _mm512_cvtepi32_epi16(r));
  }
  narrow_scalar(dst + i, src + i, n - i);
}

__attribute__((target("avx512f"))) void widen_avx512(float* dst, const uint16_t* src, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512i w = _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i)));
    _mm512_storeu_si512(dst + i, _mm512_slli_epi32(w, 16));
  }
  widen_scalar(dst + i, src + i, n - i);
}

}  // namespace bf16_detail

namespace {

constexpr int64_t kBlock = 16384;  // elements per OpenMP work item

// The ISA whose casts run: the active one, or the scalar code while ZT_ISA is invalid (every
// path gives the same bits, and start-up and doctor report the variable; doctor must not abort).
Isa cast_isa() { return active_isa_status().ok() ? active_isa() : Isa::kScalar; }

}  // namespace

void cast_f32_to_bf16(bf16_t* dst, const float* src, int64_t n) {
  namespace d = bf16_detail;
  static const auto path = cast_isa() == Isa::kAvx512 ? &d::narrow_avx512
                           : cast_isa() == Isa::kAvx2 ? &d::narrow_avx2
                                                      : &d::narrow_scalar;
  cast_blocks(bits_of(dst), src, n, kBlock, path);
}

void cast_bf16_to_f32(float* dst, const bf16_t* src, int64_t n) {
  namespace d = bf16_detail;
  static const auto path = cast_isa() == Isa::kAvx512 ? &d::widen_avx512
                           : cast_isa() == Isa::kAvx2 ? &d::widen_avx2
                                                      : &d::widen_scalar;
  cast_blocks(dst, bits_of(src), n, kBlock, path);
}

}  // namespace zt
