// Elementwise CPU kernels (see elementwise.h).
#include "kernels/cpu/elementwise.h"

#include <cstring>

namespace zt {

void bias_residual(float* out, const float* residual, const float* partial, const float* bias, int64_t N, int C) {
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < N; ++r) {
    const float* p = partial + r * C;
    const float* x = residual + r * C;
    float* o = out + r * C;
    if (bias == nullptr) {
      for (int j = 0; j < C; ++j) o[j] = x[j] + p[j];
    } else {
      for (int j = 0; j < C; ++j) o[j] = (x[j] + p[j]) + bias[j];
    }
  }
}

void accumulate(float* dst, const float* src, int64_t n) {
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) dst[i] += src[i];
}

void scale_f32(float* x, float c, int64_t n) {
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) x[i] *= c;
}

void copy_f32(float* dst, const float* src, int64_t n) {
  parallel_copy(dst, src, static_cast<size_t>(n) * sizeof(float));
}

void sgd_step(float* p, const float* g_in, float* buf, int64_t n, const SgdArgs& a) {
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) {
    float g = g_in[i] * a.grad_scale;
    if (a.weight_decay != 0.0f) g = g + a.weight_decay * p[i];
    if (a.use_momentum) {
      buf[i] = a.first ? g : a.momentum * buf[i] + a.dampening_factor * g;
      g = a.nesterov ? g + a.momentum * buf[i] : buf[i];
    }
    p[i] = p[i] - a.lr * g;
  }
}

void parallel_zero(void* dst, size_t bytes) {
  constexpr size_t kChunk = size_t{1} << 20;
  if (bytes < 4 * kChunk) {
    if (bytes > 0) std::memset(dst, 0, bytes);
    return;
  }
  const int64_t chunks = static_cast<int64_t>((bytes + kChunk - 1) / kChunk);
#pragma omp parallel for schedule(static)
  for (int64_t c = 0; c < chunks; ++c) {
    const size_t lo = static_cast<size_t>(c) * kChunk, len = lo + kChunk < bytes ? kChunk : bytes - lo;
    std::memset(static_cast<char*>(dst) + lo, 0, len);
  }
}

void parallel_copy(void* dst, const void* src, size_t bytes) {
  constexpr size_t kChunk = size_t{1} << 20;
  if (bytes < 4 * kChunk) {
    if (bytes > 0) std::memcpy(dst, src, bytes);
    return;
  }
  const int64_t chunks = static_cast<int64_t>((bytes + kChunk - 1) / kChunk);
#pragma omp parallel for schedule(static)
  for (int64_t c = 0; c < chunks; ++c) {
    const size_t lo = static_cast<size_t>(c) * kChunk, len = lo + kChunk < bytes ? kChunk : bytes - lo;
    std::memcpy(static_cast<char*>(dst) + lo, static_cast<const char*>(src) + lo, len);
  }
}

}  // namespace zt
