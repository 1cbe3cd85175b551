// Linear layer via sgemm, bias/residual initialisation and column-blocked bias grads.
#include "kernels/cpu/linear.h"

#include <cstring>

#include "kernels/cpu/gemm.h"

namespace zt {

void linear_forward(float* out, const float* inp, const float* weight, const float* bias, const float* residual,
                    int64_t N, int C, int OC) {
  float beta = 0.0f;
  if (residual != nullptr || bias != nullptr) {
    beta = 1.0f;
#pragma omp parallel for schedule(static)
    for (int64_t r = 0; r < N; ++r) {
      float* o = out + r * OC;
      if (residual != nullptr && residual != out) std::memcpy(o, residual + r * OC, sizeof(float) * OC);
      if (residual == nullptr) {
        std::memcpy(o, bias, sizeof(float) * OC);
      } else if (bias != nullptr) {
        for (int j = 0; j < OC; ++j) o[j] += bias[j];
      }
    }
  }
  sgemm(Trans::kNo, Trans::kYes, static_cast<int>(N), OC, C, 1.0f, inp, C, weight, C, beta, out, OC);
}

void linear_backward(float* dinp, float* dweight, float* dbias, const float* dout, const float* inp,
                     const float* weight, int64_t N, int C, int OC) {
  const int n = static_cast<int>(N);
  if (dinp != nullptr) sgemm(Trans::kNo, Trans::kNo, n, C, OC, 1.0f, dout, OC, weight, C, 0.0f, dinp, C);
  sgemm(Trans::kYes, Trans::kNo, OC, C, n, 1.0f, dout, OC, inp, C, 1.0f, dweight, C);
  if (dbias == nullptr) return;
  constexpr int kBlock = 64;
  const int nblocks = (OC + kBlock - 1) / kBlock;
#pragma omp parallel for schedule(static)
  for (int blk = 0; blk < nblocks; ++blk) {
    const int c0 = blk * kBlock;
    const int c1 = (c0 + kBlock < OC) ? c0 + kBlock : OC;
    for (int64_t r = 0; r < N; ++r) {
      const float* d = dout + r * OC;
      for (int c = c0; c < c1; ++c) dbias[c] += d[c];
    }
  }
}

void linear_partial(float* partial, const float* inp, const float* weight, int64_t N, int C, int OC) {
  linear_forward(partial, inp, weight, nullptr, nullptr, N, C, OC);
}

}  // namespace zt
