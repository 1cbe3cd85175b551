// RMSNorm forward/backward over rows of C (HF LlamaRMSNorm), templated on an ISA struct S
// and on the activations' element type T: float, or uint16_t for bf16 (simd/elements.h:
// read and written directly, the arithmetic in fp32 registers, each output rounded once, so
// bit for bit round(the fp32 kernel on the widened values)). Included inside a per-ISA
// namespace by kernels_<isa>.cc; the contract is ActivationOps' rmsnorm_forward/backward
// (kernels/activation_ops.h). With r = 1 / sqrt(mean(x^2) + eps) (eps inside the square
// root, fp32 statistics) and u = weight * dout:
//   y = (x * r) * weight,  dx += r * (u - x * r^2 * mean(u * x)),  dweight += sum_rows dout * x * r.
// Every reduction has a fixed order, independent of thread count: rows are independent,
// and dweight is split by column blocks, each summing rows in row order.
#pragma once

#include <cmath>
#include <cstdint>

#include "kernels/cpu/simd/elements.h"

// sum_c a[c] * b[c] * (w[c] when w is not null) in vector lanes, then reduced.
template <class S, class T>
static float rms_row_dot(const T* a, const T* b, const T* w, int C) {
  typename S::V acc = S::zero();
  int i = 0;
  for (; i + S::kWidth <= C; i += S::kWidth) {
    const auto x = w != nullptr ? S::mul(zt::simd::load<S>(a + i), zt::simd::load<S>(w + i)) : zt::simd::load<S>(a + i);
    acc = S::fmadd(x, zt::simd::load<S>(b + i), acc);
  }
  if (i < C) {
    const int k = C - i;
    auto x = zt::simd::load_tail<S>(a + i, k, 0.0f);
    if (w != nullptr) x = S::mul(x, zt::simd::load_tail<S>(w + i, k, 0.0f));
    acc = S::fmadd(x, zt::simd::load_tail<S>(b + i, k, 0.0f), acc);
  }
  return S::reduce_add(acc);
}

template <class S, class T>
void rmsnorm_forward_impl(T* out, float* rstd, const T* inp, const T* weight, int64_t N, int C, float eps) {
  using V = typename S::V;
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < N; ++r) {
    const T* x = inp + r * C;
    T* y = out + r * C;
    const float ms = rms_row_dot<S>(x, x, static_cast<const T*>(nullptr), C) / static_cast<float>(C);
    const float s = 1.0f / std::sqrt(ms + eps);
    const V vs = S::set1(s);
    int i = 0;
    for (; i + S::kWidth <= C; i += S::kWidth) {
      zt::simd::store<S>(y + i, S::mul(S::mul(zt::simd::load<S>(x + i), vs), zt::simd::load<S>(weight + i)));
    }
    if (i < C) {
      const int k = C - i;
      const V n = S::mul(zt::simd::load_tail<S>(x + i, k, 0.0f), vs);
      zt::simd::store_tail<S>(y + i, S::mul(n, zt::simd::load_tail<S>(weight + i, k, 0.0f)), k);
    }
    rstd[r] = s;
  }
}

// dx += r * (w dy - x * c) for one row, c = r^2 mean(w dy x).
template <class S, class T>
static void rms_row_dinp(T* dx, const T* x, const T* dy, const T* w, float r, float c, int C) {
  using V = typename S::V;
  const V vr = S::set1(r), vc = S::set1(c);
  int i = 0;
  for (; i + S::kWidth <= C; i += S::kWidth) {
    const V u = S::mul(zt::simd::load<S>(dy + i), zt::simd::load<S>(w + i));
    const V g = S::mul(S::sub(u, S::mul(zt::simd::load<S>(x + i), vc)), vr);
    zt::simd::store<S>(dx + i, S::add(zt::simd::load<S>(dx + i), g));
  }
  if (i < C) {
    const int k = C - i;
    const V u = S::mul(zt::simd::load_tail<S>(dy + i, k, 0.0f), zt::simd::load_tail<S>(w + i, k, 0.0f));
    const V g = S::mul(S::sub(u, S::mul(zt::simd::load_tail<S>(x + i, k, 0.0f), vc)), vr);
    zt::simd::store_tail<S>(dx + i, S::add(zt::simd::load_tail<S>(dx + i, k, 0.0f), g), k);
  }
}

// dweight[c] += sum_r dout[r][c] * (x[r][c] * rstd[r]), each column summed over the rows in
// row order (one multiply, another, then the add: the same bits as one column at a time).
// One vector of columns is held in a register over all rows; the vectors spread over the threads.
template <class S, class T>
void rms_dweight(float* dweight, const T* dout, const T* inp, const float* rstd, int64_t N, int C) {
  using V = typename S::V;
  const int nvec = (C + S::kWidth - 1) / S::kWidth;
#pragma omp parallel for schedule(static)
  for (int j = 0; j < nvec; ++j) {
    const int c0 = j * S::kWidth, k = C - c0 < S::kWidth ? C - c0 : S::kWidth;
    V dw = zt::simd::load_tail<S>(dweight + c0, k, 0.0f);
    for (int64_t r = 0; r < N; ++r) {
      const T* x = inp + r * C + c0;
      const T* dy = dout + r * C + c0;
      const V xv = k == S::kWidth ? zt::simd::load<S>(x) : zt::simd::load_tail<S>(x, k, 0.0f);
      const V g = k == S::kWidth ? zt::simd::load<S>(dy) : zt::simd::load_tail<S>(dy, k, 0.0f);
      dw = S::add(dw, S::mul(g, S::mul(xv, S::set1(rstd[r]))));
    }
    zt::simd::store_tail<S>(dweight + c0, dw, k);
  }
}

template <class S, class T>
void rmsnorm_backward_impl(T* dinp, float* dweight, const T* dout, const T* inp, const T* weight, const float* rstd,
                           int64_t N, int C) {
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < N; ++r) {
    const T* x = inp + r * C;
    const T* dy = dout + r * C;
    const float s = rstd[r];
    const float c = s * s * (rms_row_dot<S>(dy, x, weight, C) / static_cast<float>(C));
    rms_row_dinp<S>(dinp + r * C, x, dy, weight, s, c, C);
  }
  rms_dweight<S>(dweight, dout, inp, rstd, N, C);
}
