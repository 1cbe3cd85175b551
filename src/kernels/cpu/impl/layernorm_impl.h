// LayerNorm forward/backward over rows of C, templated on an ISA struct S and on the
// activations' element type T: float, or uint16_t for bf16 (simd/elements.h: read and
// written directly, the arithmetic in fp32 registers, each output rounded once, so bit for
// bit round(the fp32 kernel on the widened values)). Included inside a per-ISA namespace
// by kernels_<isa>.cc; see kernels/activation_ops.h for the contract. Every reduction has
// a fixed order, independent of thread count: rows are independent, and parameter
// gradients are split by column blocks. Statistics and parameter gradients are fp32.
#pragma once

#include <cmath>
#include <cstdint>

#include "kernels/cpu/simd/elements.h"

template <class S, class T>
static float row_sum(const T* x, int C) {
  typename S::V acc = S::zero();
  int i = 0;
  for (; i + S::kWidth <= C; i += S::kWidth) acc = S::add(acc, zt::simd::load<S>(x + i));
  if (i < C) acc = S::add(acc, zt::simd::load_tail<S>(x + i, C - i, 0.0f));
  return S::reduce_add(acc);
}

template <class S, class T>
void layernorm_forward_impl(T* out, float* mean, float* rstd, const T* inp, const T* weight, const T* bias,
                            int64_t N, int C) {
  constexpr float kEps = 1e-5f;
  using V = typename S::V;
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < N; ++r) {
    const T* x = inp + r * C;
    T* y = out + r * C;
    const float m = row_sum<S>(x, C) / static_cast<float>(C);
    const V vm = S::set1(m);
    V acc = S::zero();
    int i = 0;
    for (; i + S::kWidth <= C; i += S::kWidth) {
      const V d = S::sub(zt::simd::load<S>(x + i), vm);
      acc = S::fmadd(d, d, acc);
    }
    if (i < C) {
      const V d = S::sub(zt::simd::load_tail<S>(x + i, C - i, m), vm);
      acc = S::fmadd(d, d, acc);
    }
    const float var = S::reduce_add(acc) / static_cast<float>(C);
    const float s = 1.0f / std::sqrt(var + kEps);
    const V vs = S::set1(s);
    i = 0;
    for (; i + S::kWidth <= C; i += S::kWidth) {
      const V n = S::mul(S::sub(zt::simd::load<S>(x + i), vm), vs);
      zt::simd::store<S>(y + i, S::fmadd(n, zt::simd::load<S>(weight + i), zt::simd::load<S>(bias + i)));
    }
    if (i < C) {
      const int k = C - i;
      const V n = S::mul(S::sub(zt::simd::load_tail<S>(x + i, k, 0.0f), vm), vs);
      const V w = zt::simd::load_tail<S>(weight + i, k, 0.0f);
      const V b = zt::simd::load_tail<S>(bias + i, k, 0.0f);
      zt::simd::store_tail<S>(y + i, S::fmadd(n, w, b), k);
    }
    mean[r] = m;
    rstd[r] = s;
  }
}

// dweight[c] += sum_r dout[r][c] * norm[r][c] and dbias[c] += sum_r dout[r][c], each column
// summed over the rows in row order (a multiply, then an add: the same bits as one column at a
// time, for any ISA and thread count). Blocks of kCols columns are held in registers over
// all rows; the blocks are spread over the threads.
template <class S, class T>
void layernorm_param_grads(float* dweight, float* dbias, const T* dout, const T* inp, const float* mean,
                           const float* rstd, int64_t N, int C) {
  using V = typename S::V;
  constexpr int kVecs = 4, kCols = kVecs * S::kWidth;
  const int nblocks = (C + kCols - 1) / kCols;
#pragma omp parallel for schedule(static)
  for (int blk = 0; blk < nblocks; ++blk) {
    const int c0 = blk * kCols;
    const int width = (c0 + kCols < C) ? kCols : C - c0;
    V dw[kVecs], db[kVecs];
    for (int v = 0; v < kVecs; ++v) {
      const int k = width - v * S::kWidth;
      dw[v] = k > 0 ? zt::simd::load_tail<S>(dweight + c0 + v * S::kWidth, k < S::kWidth ? k : S::kWidth, 0.0f) : S::zero();
      db[v] = k > 0 ? zt::simd::load_tail<S>(dbias + c0 + v * S::kWidth, k < S::kWidth ? k : S::kWidth, 0.0f) : S::zero();
    }
    for (int64_t r = 0; r < N; ++r) {
      const T* x = inp + r * C + c0;
      const T* dy = dout + r * C + c0;
      const V vm = S::set1(mean[r]), vs = S::set1(rstd[r]);
      for (int v = 0; v < kVecs; ++v) {
        const int k = width - v * S::kWidth;
        if (k <= 0) break;
        const int n = k < S::kWidth ? k : S::kWidth;
        const T* gp = dy + v * S::kWidth;
        const T* xp = x + v * S::kWidth;
        const V g = n == S::kWidth ? zt::simd::load<S>(gp) : zt::simd::load_tail<S>(gp, n, 0.0f);
        const V xv = n == S::kWidth ? zt::simd::load<S>(xp) : zt::simd::load_tail<S>(xp, n, 0.0f);
        dw[v] = S::add(dw[v], S::mul(g, S::mul(S::sub(xv, vm), vs)));
        db[v] = S::add(db[v], g);
      }
    }
    for (int v = 0; v < kVecs; ++v) {
      const int k = width - v * S::kWidth;
      if (k <= 0) break;
      zt::simd::store_tail<S>(dweight + c0 + v * S::kWidth, dw[v], k < S::kWidth ? k : S::kWidth);
      zt::simd::store_tail<S>(dbias + c0 + v * S::kWidth, db[v], k < S::kWidth ? k : S::kWidth);
    }
  }
}

// dinp += d/dx; dweight += sum_rows dout * norm; dbias += sum_rows dout.
template <class S, class T>
void layernorm_backward_impl(T* dinp, float* dweight, float* dbias, const T* dout, const T* inp, const T* weight,
                             const float* mean, const float* rstd, int64_t N, int C) {
  using V = typename S::V;
  // Input gradient, one row at a time.
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < N; ++r) {
    const T* x = inp + r * C;
    const T* dy = dout + r * C;
    T* dx = dinp + r * C;
    const V vm = S::set1(mean[r]);
    const V vs = S::set1(rstd[r]);
    V acc_d = S::zero(), acc_dn = S::zero();
    int i = 0;
    for (; i + S::kWidth <= C; i += S::kWidth) {
      const V n = S::mul(S::sub(zt::simd::load<S>(x + i), vm), vs);
      const V dn = S::mul(zt::simd::load<S>(dy + i), zt::simd::load<S>(weight + i));
      acc_d = S::add(acc_d, dn);
      acc_dn = S::fmadd(dn, n, acc_dn);
    }
    if (i < C) {
      const int k = C - i;
      const V n = S::mul(S::sub(zt::simd::load_tail<S>(x + i, k, mean[r]), vm), vs);
      const V dn = S::mul(zt::simd::load_tail<S>(dy + i, k, 0.0f), zt::simd::load_tail<S>(weight + i, k, 0.0f));
      acc_d = S::add(acc_d, dn);
      acc_dn = S::fmadd(dn, n, acc_dn);
    }
    const V dmean = S::set1(S::reduce_add(acc_d) / static_cast<float>(C));
    const V dnmean = S::set1(S::reduce_add(acc_dn) / static_cast<float>(C));
    i = 0;
    for (; i + S::kWidth <= C; i += S::kWidth) {
      const V n = S::mul(S::sub(zt::simd::load<S>(x + i), vm), vs);
      const V dn = S::mul(zt::simd::load<S>(dy + i), zt::simd::load<S>(weight + i));
      const V g = S::mul(S::sub(S::sub(dn, dmean), S::mul(n, dnmean)), vs);
      zt::simd::store<S>(dx + i, S::add(zt::simd::load<S>(dx + i), g));
    }
    if (i < C) {
      const int k = C - i;
      const V n = S::mul(S::sub(zt::simd::load_tail<S>(x + i, k, 0.0f), vm), vs);
      const V dn = S::mul(zt::simd::load_tail<S>(dy + i, k, 0.0f), zt::simd::load_tail<S>(weight + i, k, 0.0f));
      const V g = S::mul(S::sub(S::sub(dn, dmean), S::mul(n, dnmean)), vs);
      zt::simd::store_tail<S>(dx + i, S::add(zt::simd::load_tail<S>(dx + i, k, 0.0f), g), k);
    }
  }
  layernorm_param_grads<S>(dweight, dbias, dout, inp, mean, rstd, N, C);
}
