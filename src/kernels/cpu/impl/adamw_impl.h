// AdamW step over a contiguous range, exactly torch.optim.AdamW's single-tensor
// arithmetic in fp32 (same operation order, no fused multiply-add), so the SIMD
// variants are bit-identical to the scalar reference:
//   g <- g * grad_scale                  (clip coefficient; 1 when not clipping)
//   p <- p * (1 - lr * wd)
//   m <- m * b1 + g * (1 - b1)
//   v <- v * b2 + ((1 - b2) * g) * g
//   p <- p - step_size * (m / (sqrt(v) / sqrt(bc2) + eps)),  step_size = lr / bc1
// Memory-bound: 4 streams read, 3 written; split into fixed chunks across threads.
// The mixed-precision forms also write the 16-bit compute copy of p in the same pass (the
// same bits as the step followed by the bulk cast, since narrowing is elementwise): bf16
// from each updated vector in registers (simd/elements.h), f16 by narrow(out + lo, p + lo,
// len) on each chunk right after its update, while the chunk is in cache. Narrowing the
// bf16 copy from the registers instead of re-reading the chunk took GPT-2 small's update
// (124 M parameters, 2 threads, Zen 5) from 43-45 to 36-39 ms, the fp32 step's 34-35.
#pragma once

#include <cstdint>

#include "kernels/cpu/simd/elements.h"
#include "kernels/kernel_args.h"

template <class S>
static inline void adamw_vec(typename S::V& p, typename S::V g, typename S::V& m, typename S::V& v,
                             const zt::AdamWArgs& a) {
  g = S::mul(g, S::set1(a.grad_scale));
  p = S::mul(p, S::set1(a.decay_factor));
  m = S::add(S::mul(m, S::set1(a.beta1)), S::mul(g, S::set1(a.one_minus_beta1)));
  v = S::add(S::mul(v, S::set1(a.beta2)), S::mul(S::mul(S::set1(a.one_minus_beta2), g), g));
  const auto denom = S::add(S::div(S::sqrt(v), S::set1(a.bias_correction2_sqrt)), S::set1(a.eps));
  p = S::add(p, S::mul(S::set1(a.neg_step_size), S::div(m, denom)));
}

// kBf16: out gets the bf16 copy from the registers (narrow is unused); else narrow, when
// not null, writes the chunk's copy.
template <class S, bool kBf16>
void adamw_step_copy_impl(float* p, const float* g, float* m, float* v, int64_t n, const zt::AdamWArgs& a,
                          uint16_t* out, zt::NarrowFn narrow) {
  constexpr int64_t kChunk = 1 << 14;
  const int64_t nchunks = (n + kChunk - 1) / kChunk;
#pragma omp parallel for schedule(static)
  for (int64_t c = 0; c < nchunks; ++c) {
    const int64_t lo = c * kChunk, hi = (lo + kChunk < n) ? lo + kChunk : n;
    int64_t i = lo;
    for (; i + S::kWidth <= hi; i += S::kWidth) {
      auto vp = S::load(p + i), vm = S::load(m + i), vv = S::load(v + i);
      adamw_vec<S>(vp, S::load(g + i), vm, vv, a);
      S::store(p + i, vp);
      S::store(m + i, vm);
      S::store(v + i, vv);
      if constexpr (kBf16) S::store_bf16(out + i, vp);
    }
    if (i < hi) {
      const int k = static_cast<int>(hi - i);
      auto vp = zt::simd::load_tail<S>(p + i, k, 0.0f), vm = zt::simd::load_tail<S>(m + i, k, 0.0f);
      auto vv = zt::simd::load_tail<S>(v + i, k, 0.0f);
      adamw_vec<S>(vp, zt::simd::load_tail<S>(g + i, k, 0.0f), vm, vv, a);
      zt::simd::store_tail<S>(p + i, vp, k);
      zt::simd::store_tail<S>(m + i, vm, k);
      zt::simd::store_tail<S>(v + i, vv, k);
      if constexpr (kBf16) zt::simd::store_tail<S>(out + i, vp, k);
    }
    if (!kBf16 && narrow != nullptr) narrow(out + lo, p + lo, hi - lo);
  }
}

template <class S>
void adamw_step_narrow_impl(float* p, const float* g, float* m, float* v, int64_t n, const zt::AdamWArgs& a,
                            uint16_t* out, zt::NarrowFn narrow) {
  adamw_step_copy_impl<S, false>(p, g, m, v, n, a, out, narrow);
}

template <class S>
void adamw_step_bf16_impl(float* p, const float* g, float* m, float* v, int64_t n, const zt::AdamWArgs& a,
                          uint16_t* out) {
  adamw_step_copy_impl<S, true>(p, g, m, v, n, a, out, nullptr);
}

template <class S>
void adamw_step_impl(float* p, const float* g, float* m, float* v, int64_t n, const zt::AdamWArgs& a) {
  adamw_step_copy_impl<S, false>(p, g, m, v, n, a, nullptr, nullptr);
}
