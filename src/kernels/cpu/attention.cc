// Attention as per-head GEMMs (single-threaded BLAS inside a parallel loop over
// (batch, head)) plus the ISA-dispatched causal softmax.
#include "kernels/cpu/attention.h"

#include <cmath>
#include <cstdint>
#include <vector>

#include "kernels/cpu/gemm.h"
#include "kernels/cpu/kernel_table.h"

namespace zt {

void attention_forward(float* atty, float* att, const float* qkv, int B, int T, int C, int NH) {
  const int hs = C / NH;
  const float scale = 1.0f / std::sqrt(static_cast<float>(hs));
  const KernelTable& k = cpu_kernels();
  const int C3 = 3 * C;
#pragma omp parallel for schedule(static)
  for (int bh = 0; bh < B * NH; ++bh) {
    const int b = bh / NH, h = bh % NH;
    const float* q = qkv + static_cast<int64_t>(b) * T * C3 + h * hs;
    const float* kk = q + C;
    const float* v = q + 2 * C;
    float* P = att + static_cast<int64_t>(bh) * T * T;
    float* out = atty + static_cast<int64_t>(b) * T * C + h * hs;
    sgemm(Trans::kNo, Trans::kYes, T, T, hs, scale, q, C3, kk, C3, 0.0f, P, T);
    k.attention_softmax_forward(P, T);
    sgemm(Trans::kNo, Trans::kNo, T, hs, T, 1.0f, P, T, v, C3, 0.0f, out, C);
  }
}

void attention_backward(float* dqkv, const float* datty, const float* qkv, const float* att, int B, int T, int C,
                        int NH) {
  const int hs = C / NH;
  const float scale = 1.0f / std::sqrt(static_cast<float>(hs));
  const KernelTable& k = cpu_kernels();
  const int C3 = 3 * C;
#pragma omp parallel
  {
    // One T x T scratch per thread for dP, then dS in place.
    std::vector<float> dP(static_cast<size_t>(T) * T);
#pragma omp for schedule(static)
    for (int bh = 0; bh < B * NH; ++bh) {
      const int b = bh / NH, h = bh % NH;
      const int64_t base = static_cast<int64_t>(b) * T * C3 + h * hs;
      const float* q = qkv + base;
      const float* kk = q + C;
      const float* v = q + 2 * C;
      float* dq = dqkv + base;
      float* dk = dq + C;
      float* dv = dq + 2 * C;
      const float* P = att + static_cast<int64_t>(bh) * T * T;
      const float* dout = datty + static_cast<int64_t>(b) * T * C + h * hs;
      sgemm(Trans::kYes, Trans::kNo, T, hs, T, 1.0f, P, T, dout, C, 0.0f, dv, C3);           // dV = P^T dO
      sgemm(Trans::kNo, Trans::kYes, T, T, hs, 1.0f, dout, C, v, C3, 0.0f, dP.data(), T);   // dP = dO V^T
      k.attention_softmax_backward(dP.data(), P, T, scale);                                  // dS (scaled)
      sgemm(Trans::kNo, Trans::kNo, T, hs, T, 1.0f, dP.data(), T, kk, C3, 0.0f, dq, C3);     // dQ = dS K
      sgemm(Trans::kYes, Trans::kNo, T, hs, T, 1.0f, dP.data(), T, q, C3, 0.0f, dk, C3);     // dK = dS^T Q
    }
  }
}

}  // namespace zt
