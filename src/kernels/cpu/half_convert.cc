// f16 bulk conversions: F16C (vcvtph2ps / vcvtps2ph, round-to-nearest-even immediate)
// when the CPU has it and ZT_ISA allows vector code, else the scalar bit manipulation of
// half_convert.h. The F16C functions are compiled for that target only and called only
// after the run-time check, so the library still runs on CPUs without F16C.
#include "kernels/cpu/half_convert.h"

#include <immintrin.h>

#include "core/check.h"
#include "core/cpu_features.h"
#include "kernels/cpu/cast_blocks.h"

namespace zt {

namespace {

constexpr int64_t kBlock = 4096;  // elements per OpenMP work item

__attribute__((target("avx,f16c"))) void f16_to_f32_f16c(float* dst, const f16_t* src, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i));
    _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(h));
  }
  for (; i < n; ++i) dst[i] = f16_bits_to_f32(src[i].bits);
}

__attribute__((target("avx,f16c"))) void f32_to_f16_f16c(f16_t* dst, const float* src, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i), h);
  }
  for (; i < n; ++i) dst[i] = f16_t{f32_to_f16_bits(src[i])};
}

float widen_f16(f16_t h) { return f16_bits_to_f32(h.bits); }
f16_t narrow_f16(float f) { return f16_t{f32_to_f16_bits(f)}; }

// dst[i] = One(src[i]) for i < n, through `f16c` (the same bits) where f16_uses_f16c().
template <auto One, typename Dst, typename Src>
void convert_blocks(Dst* dst, const Src* src, int64_t n, void (*f16c)(Dst*, const Src*, int64_t)) {
  const bool vector = f16_uses_f16c();
  cast_blocks(dst, src, n, kBlock, [&](Dst* d, const Src* s, int64_t len) {
    if (vector) {
      f16c(d, s, len);
    } else {
      for (int64_t i = 0; i < len; ++i) d[i] = One(s[i]);
    }
  });
}

}  // namespace

bool f16_uses_f16c() {
  static const bool use = active_isa() != Isa::kScalar && __builtin_cpu_supports("f16c");
  return use;
}

void f16_to_f32(float* dst, const f16_t* src, int64_t n) {
  convert_blocks<&widen_f16>(dst, src, n, &f16_to_f32_f16c);
}

void f32_to_f16(f16_t* dst, const float* src, int64_t n) {
  convert_blocks<&narrow_f16>(dst, src, n, &f32_to_f16_f16c);
}

void half_to_f32(DType compute, float* dst, const half_t* src, int64_t n) {
  ZT_CHECK(compute != DType::kF32, "half_to_f32: compute dtype must be bf16 or f16");
  if (compute == DType::kBF16) {
    bf16_to_f32(dst, as_format<DType::kBF16>(src), n);
  } else {
    f16_to_f32(dst, as_format<DType::kF16>(src), n);
  }
}

void f32_to_half(DType compute, half_t* dst, const float* src, int64_t n) {
  ZT_CHECK(compute != DType::kF32, "f32_to_half: compute dtype must be bf16 or f16");
  if (compute == DType::kBF16) {
    f32_to_bf16(as_format<DType::kBF16>(dst), src, n);
  } else {
    f32_to_f16(as_format<DType::kF16>(dst), src, n);
  }
}

}  // namespace zt
