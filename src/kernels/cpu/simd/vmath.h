// Vector math on top of an ISA struct: exp and tanh, accurate to a few ulp over the
// ranges the kernels use, identical in algorithm on every ISA (Cephes expf polynomial,
// range reduction by ln 2 split in two constants). Inputs below -87.3 give ~1e-38
// rather than exact 0; the kernels never feed -inf (masked entries are skipped).
#pragma once

namespace zt::simd {

template <class S>
inline typename S::V vexp(typename S::V x) {
  using V = typename S::V;
  x = S::min(x, S::set1(88.3762626647949f));
  x = S::max(x, S::set1(-87.3365447505531f));
  const V n = S::round_nearest(S::mul(x, S::set1(1.44269504088896341f)));
  V r = S::fmadd(n, S::set1(-0.693359375f), x);
  r = S::fmadd(n, S::set1(2.12194440e-4f), r);
  V p = S::set1(1.9875691500e-4f);
  p = S::fmadd(p, r, S::set1(1.3981999507e-3f));
  p = S::fmadd(p, r, S::set1(8.3334519073e-3f));
  p = S::fmadd(p, r, S::set1(4.1665795894e-2f));
  p = S::fmadd(p, r, S::set1(1.6666665459e-1f));
  p = S::fmadd(p, r, S::set1(5.0000001201e-1f));
  p = S::fmadd(p, S::mul(r, r), S::add(r, S::set1(1.0f)));
  // 2^n in two halves so n = 128 (x near the upper clamp) does not overflow the exponent.
  const V half_n = S::round_nearest(S::mul(n, S::set1(0.5f)));
  return S::mul(S::mul(p, S::pow2i(half_n)), S::pow2i(S::sub(n, half_n)));
}

// tanh(y) = 1 - 2 / (exp(2y) + 1); absolute error ~1e-7 near 0, saturates to +-1.
template <class S>
inline typename S::V vtanh(typename S::V y) {
  using V = typename S::V;
  const V e = vexp<S>(S::add(y, y));
  return S::sub(S::set1(1.0f), S::div(S::set1(2.0f), S::add(e, S::set1(1.0f))));
}

}  // namespace zt::simd
