// Attention as per-head GEMMs (single-threaded BLAS inside a parallel loop over
// (batch, head)) plus the ISA-dispatched causal softmax. Each (batch, head) is one call of
// attention_head_forward / attention_head_backward, which the 16-bit kernels share.
#include "kernels/cpu/attention.h"

#include <cmath>
#include <cstdint>
#include <vector>

#include "kernels/cpu/gemm.h"
#include "kernels/cpu/kernel_table.h"

namespace zt {

void attention_head_forward(float* out, int ldo, float* P, const float* q, const float* k, const float* v, int ld,
                            int T, int hs) {
  const float scale = 1.0f / std::sqrt(static_cast<float>(hs));
  sgemm(Trans::kNo, Trans::kYes, T, T, hs, scale, q, ld, k, ld, 0.0f, P, T);
  cpu_kernels().attention_softmax_forward(P, T);
  sgemm(Trans::kNo, Trans::kNo, T, hs, T, 1.0f, P, T, v, ld, 0.0f, out, ldo);
}

void attention_head_backward(const AttentionHeadGrads& g, float* dP, const float* dout, int ldo, const float* q,
                             const float* k, const float* v, int ld, const float* P, int T, int hs) {
  const float scale = 1.0f / std::sqrt(static_cast<float>(hs));
  sgemm(Trans::kYes, Trans::kNo, T, hs, T, 1.0f, P, T, dout, ldo, 0.0f, g.dv, g.ld);  // dV = P^T dO
  sgemm(Trans::kNo, Trans::kYes, T, T, hs, 1.0f, dout, ldo, v, ld, 0.0f, dP, T);      // dP = dO V^T
  cpu_kernels().attention_softmax_backward(dP, P, T, scale);                           // dS (scaled)
  sgemm(Trans::kNo, Trans::kNo, T, hs, T, 1.0f, dP, T, k, ld, 0.0f, g.dq, g.ld);      // dQ = dS K
  sgemm(Trans::kYes, Trans::kNo, T, hs, T, 1.0f, dP, T, q, ld, 0.0f, g.dk, g.ld);     // dK = dS^T Q
}

void attention_forward(float* atty, float* att, const float* qkv, int B, int T, int C, int NH) {
  const int hs = C / NH, C3 = 3 * C;
#pragma omp parallel for schedule(static)
  for (int bh = 0; bh < B * NH; ++bh) {
    const int b = bh / NH, h = bh % NH;
    const float* q = qkv + static_cast<int64_t>(b) * T * C3 + h * hs;
    attention_head_forward(atty + static_cast<int64_t>(b) * T * C + h * hs, C, att + static_cast<int64_t>(bh) * T * T,
                           q, q + C, q + 2 * C, C3, T, hs);
  }
}

void attention_backward(float* dqkv, const float* datty, const float* qkv, const float* att, int B, int T, int C,
                        int NH) {
  const int hs = C / NH, C3 = 3 * C;
#pragma omp parallel
  {
    // One T x T scratch per thread for dP, then dS in place.
    std::vector<float> dP(static_cast<size_t>(T) * T);
#pragma omp for schedule(static)
    for (int bh = 0; bh < B * NH; ++bh) {
      const int b = bh / NH, h = bh % NH;
      const int64_t base = static_cast<int64_t>(b) * T * C3 + h * hs;
      const float* q = qkv + base;
      float* dq = dqkv + base;
      attention_head_backward({dq, dq + C, dq + 2 * C, C3}, dP.data(), datty + static_cast<int64_t>(b) * T * C + h * hs,
                              C, q, q + C, q + 2 * C, C3, att + static_cast<int64_t>(bh) * T * T, T, hs);
    }
  }
}

}  // namespace zt
