// The routed output with a dense MLP beside it, forward and backward; see moe_mix.h.
#include "kernels/cpu/moe_mix.h"

#include <algorithm>
#include <cmath>

namespace zt {

namespace {

// The token's two coefficients (moe's, dense's).
void coefficients(const float* logits, int64_t t, MoeMix kind, double* a, double* b) {
  if (kind == MoeMix::kResidual) {
    const double l0 = logits[2 * t], l1 = logits[2 * t + 1], m = std::max(l0, l1);
    const double e0 = std::exp(l0 - m), e1 = std::exp(l1 - m);
    *a = e0 / (e0 + e1);
    *b = e1 / (e0 + e1);
  } else if (kind == MoeMix::kGatedShared) {
    *a = 1.0;
    *b = 1.0 / (1.0 + std::exp(-static_cast<double>(logits[t])));
  } else {
    *a = *b = 1.0;
  }
}

}  // namespace

void moe_mix_forward(float* y, const float* moe, const float* dense, const float* logits, int64_t N, int C, MoeMix kind) {
#pragma omp parallel for schedule(static)
  for (int64_t t = 0; t < N; ++t) {
    double a = 1.0, b = 1.0;
    coefficients(logits, t, kind, &a, &b);
    const float fa = static_cast<float>(a), fb = static_cast<float>(b);
    for (int c = 0; c < C; ++c) y[t * C + c] = fa * moe[t * C + c] + fb * dense[t * C + c];
  }
}

void moe_mix_backward(float* dmoe, float* ddense, float* dlogits, const float* dy, const float* moe, const float* dense,
                      const float* logits, int64_t N, int C, MoeMix kind) {
#pragma omp parallel for schedule(static)
  for (int64_t t = 0; t < N; ++t) {
    double a = 1.0, b = 1.0, da = 0.0, db = 0.0;  // da, db: the loss's gradient to each coefficient
    coefficients(logits, t, kind, &a, &b);
    const float fa = static_cast<float>(a), fb = static_cast<float>(b);
    for (int c = 0; c < C; ++c) {
      const int64_t i = t * C + c;
      dmoe[i] = fa * dy[i];
      ddense[i] = fb * dy[i];
      da += static_cast<double>(dy[i]) * moe[i];
      db += static_cast<double>(dy[i]) * dense[i];
    }
    if (kind == MoeMix::kResidual) {  // through the softmax: d l0 = a (da - (a da + b db)), d l1 likewise
      const double s = a * da + b * db;
      dlogits[2 * t] = static_cast<float>(a * (da - s));
      dlogits[2 * t + 1] = static_cast<float>(b * (db - s));
    } else if (kind == MoeMix::kGatedShared) {
      dlogits[t] = static_cast<float>(db * b * (1.0 - b));
    }
  }
}

}  // namespace zt
