// DeepSpeed's quantize-dequantize arithmetic; see fake_quant.h.
#include "kernels/cpu/fake_quant.h"

#include <algorithm>
#include <cmath>

#include "core/check.h"

namespace zt {

namespace {

// torch.round on fp32: half to even (the default rounding mode), NaN and inf unchanged.
inline float rne(float v) { return std::nearbyint(v); }

void linear_group(float* x, int64_t n, int bits, bool symmetric) {
  float lo = x[0], hi = x[0];
  for (int64_t i = 1; i < n; ++i) {
    lo = std::min(lo, x[i]);
    hi = std::max(hi, x[i]);
  }
  const float q = std::ldexp(1.0f, bits);
  if (symmetric) {
    const float s = (2.0f * std::max(std::fabs(lo), std::fabs(hi))) / q;
    for (int64_t i = 0; i < n; ++i) x[i] = std::clamp(rne(x[i] / s), -q / 2, q / 2 - 1) * s;
    return;
  }
  const float s = (hi - lo) / q;
  const float zp = rne(lo / s) * s;
  for (int64_t i = 0; i < n; ++i) x[i] = std::clamp(rne((x[i] - zp) / s), 0.0f, q - 1) * s + zp;
}

float sign(float v) { return v > 0.0f ? 1.0f : v < 0.0f ? -1.0f : 0.0f; }

void low_bit_group(float* x, int64_t n, int bits) {
  double sum = 0.0;
  for (int64_t i = 0; i < n; ++i) sum += std::fabs(x[i]);
  const float m = static_cast<float>(sum / static_cast<double>(n));
  if (bits == 1) {
    for (int64_t i = 0; i < n; ++i) x[i] = m * sign(x[i]);
    return;
  }
  const float t = 0.7f * m;
  double kept = 0.0;
  int64_t count = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (std::fabs(x[i]) > t) {
      kept += std::fabs(x[i]);
      ++count;
    }
  }
  const float a = static_cast<float>(kept / static_cast<double>(count));  // NaN when nothing exceeds t, as torch's
  for (int64_t i = 0; i < n; ++i) x[i] = std::fabs(x[i]) > t ? a * sign(x[i]) : 0.0f;
}

}  // namespace

void fake_quant(float* x, int64_t n, int64_t groups, int bits, bool symmetric) {
  ZT_CHECK(groups > 0 && n % groups == 0, "fake_quant: %lld elements do not split into %lld groups",
           static_cast<long long>(n), static_cast<long long>(groups));
  ZT_CHECK(bits >= 1 && bits <= 16 && (bits >= 3 || symmetric), "fake_quant: %d-bit %s", bits,
           symmetric ? "symmetric" : "asymmetric");
  const int64_t size = n / groups;
#pragma omp parallel for schedule(static) if (groups > 1 && n > 65536)
  for (int64_t g = 0; g < groups; ++g) {
    if (bits >= 3) {
      linear_group(x + g * size, size, bits, symmetric);
    } else {
      low_bit_group(x + g * size, size, bits);
    }
  }
}

}  // namespace zt
