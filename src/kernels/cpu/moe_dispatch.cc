// MoE dispatch and combine, forward and backward; see moe_dispatch.h.
#include "kernels/cpu/moe_dispatch.h"

#include <algorithm>
#include <cstring>

namespace zt {

namespace {

// The buffer row of slot j of token t, or null where it was dropped.
template <typename T>
T* row(T* buf, const MoeSlots& s, int64_t t, int j, int C) {
  const int32_t e = s.expert[t * s.k + j];
  if (e < 0) return nullptr;
  return buf + (static_cast<int64_t>(e) * s.capacity + s.location[t * s.k + j]) * C;
}

// f(j, row) for each kept slot j of token t, in slot order.
template <typename T, typename F>
void each_slot(T* buf, const MoeSlots& s, int64_t t, int C, F f) {
  for (int j = 0; j < s.k; ++j) {
    if (T* r = row(buf, s, t, j, C)) f(j, r);
  }
}

}  // namespace

void moe_dispatch(float* buf, const float* x, const MoeSlots& s, int C) {
  std::memset(buf, 0, static_cast<size_t>(s.E) * s.capacity * C * sizeof(float));
#pragma omp parallel for schedule(static)
  for (int64_t t = 0; t < s.N; ++t) {
    each_slot(buf, s, t, C, [&](int, float* r) { std::memcpy(r, x + t * C, static_cast<size_t>(C) * sizeof(float)); });
  }
}

void moe_dispatch_backward(float* dx, const float* dbuf, const MoeSlots& s, int C) {
#pragma omp parallel for schedule(static)
  for (int64_t t = 0; t < s.N; ++t) {
    float* d = dx + t * C;
    std::fill(d, d + C, 0.0f);
    each_slot(dbuf, s, t, C, [&](int, const float* r) {
      for (int c = 0; c < C; ++c) d[c] += r[c];
    });
  }
}

void moe_combine(float* y, const float* out, const float* weight, const MoeSlots& s, int C) {
#pragma omp parallel for schedule(static)
  for (int64_t t = 0; t < s.N; ++t) {
    float* o = y + t * C;
    std::fill(o, o + C, 0.0f);
    each_slot(out, s, t, C, [&](int j, const float* r) {
      const float w = weight[t * s.k + j];
      for (int c = 0; c < C; ++c) o[c] += w * r[c];
    });
  }
}

void moe_combine_backward(float* dout, float* dweight, const float* dy, const float* out, const float* weight,
                          const MoeSlots& s, int C) {
  std::memset(dout, 0, static_cast<size_t>(s.E) * s.capacity * C * sizeof(float));
#pragma omp parallel for schedule(static)
  for (int64_t t = 0; t < s.N; ++t) {
    const float* g = dy + t * C;
    for (int j = 0; j < s.k; ++j) {
      float* d = row(dout, s, t, j, C);
      const float* r = row(out, s, t, j, C);
      dweight[t * s.k + j] = 0.0f;
      if (r == nullptr) continue;
      const float w = weight[t * s.k + j];
      double dot = 0.0;
      for (int c = 0; c < C; ++c) {
        d[c] = w * g[c];
        dot += static_cast<double>(r[c]) * g[c];
      }
      dweight[t * s.k + j] = static_cast<float>(dot);
    }
  }
}

}  // namespace zt
