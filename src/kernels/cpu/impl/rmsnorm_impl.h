// RMSNorm forward/backward over rows of C (HF LlamaRMSNorm), templated on an ISA struct S.
// Included inside a per-ISA namespace by kernels_<isa>.cc; the contract is ActivationOps'
// rmsnorm_forward/backward (kernels/activation_ops.h). With r = 1 / sqrt(mean(x^2) + eps)
// (eps inside the square root, fp32 statistics) and u = weight * dout:
//   y = (x * r) * weight,  dx += r * (u - x * r^2 * mean(u * x)),  dweight += sum_rows dout * x * r.
// Every reduction has a fixed order, independent of thread count: rows are independent,
// and dweight is split by column blocks, each summing rows in row order.
#pragma once

#include <cmath>
#include <cstdint>

#include "kernels/cpu/simd/tail.h"

// sum_c a[c] * b[c] * (w[c] when w is not null) in vector lanes, then reduced.
template <class S>
static float rms_row_dot(const float* a, const float* b, const float* w, int C) {
  typename S::V acc = S::zero();
  int i = 0;
  for (; i + S::kWidth <= C; i += S::kWidth) {
    const auto x = w != nullptr ? S::mul(S::load(a + i), S::load(w + i)) : S::load(a + i);
    acc = S::fmadd(x, S::load(b + i), acc);
  }
  if (i < C) {
    const int k = C - i;
    auto x = zt::simd::load_tail<S>(a + i, k, 0.0f);
    if (w != nullptr) x = S::mul(x, zt::simd::load_tail<S>(w + i, k, 0.0f));
    acc = S::fmadd(x, zt::simd::load_tail<S>(b + i, k, 0.0f), acc);
  }
  return S::reduce_add(acc);
}

template <class S>
void rmsnorm_forward_impl(float* out, float* rstd, const float* inp, const float* weight, int64_t N, int C,
                          float eps) {
  using V = typename S::V;
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < N; ++r) {
    const float* x = inp + r * C;
    float* y = out + r * C;
    const float ms = rms_row_dot<S>(x, x, nullptr, C) / static_cast<float>(C);
    const float s = 1.0f / std::sqrt(ms + eps);
    const V vs = S::set1(s);
    int i = 0;
    for (; i + S::kWidth <= C; i += S::kWidth) S::store(y + i, S::mul(S::mul(S::load(x + i), vs), S::load(weight + i)));
    if (i < C) {
      const int k = C - i;
      const V n = S::mul(zt::simd::load_tail<S>(x + i, k, 0.0f), vs);
      zt::simd::store_tail<S>(y + i, S::mul(n, zt::simd::load_tail<S>(weight + i, k, 0.0f)), k);
    }
    rstd[r] = s;
  }
}

// dx += r * (w dy - x * c) for one row, c = r^2 mean(w dy x).
template <class S>
static void rms_row_dinp(float* dx, const float* x, const float* dy, const float* w, float r, float c, int C) {
  using V = typename S::V;
  const V vr = S::set1(r), vc = S::set1(c);
  int i = 0;
  for (; i + S::kWidth <= C; i += S::kWidth) {
    const V u = S::mul(S::load(dy + i), S::load(w + i));
    const V g = S::mul(S::sub(u, S::mul(S::load(x + i), vc)), vr);
    S::store(dx + i, S::add(S::load(dx + i), g));
  }
  if (i < C) {
    const int k = C - i;
    const V u = S::mul(zt::simd::load_tail<S>(dy + i, k, 0.0f), zt::simd::load_tail<S>(w + i, k, 0.0f));
    const V g = S::mul(S::sub(u, S::mul(zt::simd::load_tail<S>(x + i, k, 0.0f), vc)), vr);
    zt::simd::store_tail<S>(dx + i, S::add(zt::simd::load_tail<S>(dx + i, k, 0.0f), g), k);
  }
}

template <class S>
void rmsnorm_backward_impl(float* dinp, float* dweight, const float* dout, const float* inp, const float* weight,
                           const float* rstd, int64_t N, int C) {
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < N; ++r) {
    const float* x = inp + r * C;
    const float* dy = dout + r * C;
    const float s = rstd[r];
    const float c = s * s * (rms_row_dot<S>(dy, x, weight, C) / static_cast<float>(C));
    rms_row_dinp<S>(dinp + r * C, x, dy, weight, s, c, C);
  }
  constexpr int kBlock = 64;
  const int nblocks = (C + kBlock - 1) / kBlock;
#pragma omp parallel for schedule(static)
  for (int blk = 0; blk < nblocks; ++blk) {
    const int c0 = blk * kBlock;
    const int c1 = (c0 + kBlock < C) ? c0 + kBlock : C;
    for (int64_t r = 0; r < N; ++r) {
      const float* x = inp + r * C;
      const float* dy = dout + r * C;
      const float s = rstd[r];
      for (int c = c0; c < c1; ++c) dweight[c] += dy[c] * (x[c] * s);
    }
  }
}
