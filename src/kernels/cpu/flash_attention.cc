// FlashAttention-2 on the CPU: tiles of kTile queries and keys, per-tile GEMMs on the
// calling thread, the ISA-dispatched row kernels for max and exp.
#include "kernels/cpu/flash_attention.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "kernels/cpu/gemm.h"
#include "kernels/cpu/kernel_table.h"

namespace zt {

namespace {

constexpr int kTile = 128;

// One (b, head)'s views into the fused layout: row stride C3 for q, k, v and their
// gradients, C for out and dout.
struct Head {
  const float *q, *k, *v;
  int T, hs, C, C3;
  float scale;
};

Head head_of(const float* qkv, int b, int h, int T, int C, int NH) {
  const int hs = C / NH, C3 = 3 * C;
  const float* q = qkv + static_cast<int64_t>(b) * T * C3 + h * hs;
  return {q, q + C, q + 2 * C, T, hs, C, C3, 1.0f / std::sqrt(static_cast<float>(hs))};
}

// Valid keys of row r of query tile q0 against key tile k0 (causal): all, or up to the diagonal.
int valid_keys(int q0, int r, int k0, int nk) { return std::min(nk, q0 + r - k0 + 1); }

// The forward of one query tile: rows [q0, q0 + nq) of out and lse.
void forward_tile(const Head& x, int q0, int nq, float* out, float* lse, std::vector<float>& S,
                  std::vector<float>& acc, std::vector<float>& m, std::vector<float>& l) {
  const KernelTable& k = cpu_kernels();
  std::fill(acc.begin(), acc.begin() + static_cast<size_t>(nq) * x.hs, 0.0f);
  std::fill(m.begin(), m.begin() + nq, -std::numeric_limits<float>::infinity());
  std::fill(l.begin(), l.begin() + nq, 0.0f);
  for (int k0 = 0; k0 < q0 + nq; k0 += kTile) {
    const int nk = std::min(kTile, x.T - k0);
    sgemm(Trans::kNo, Trans::kYes, nq, nk, x.hs, x.scale, x.q + static_cast<int64_t>(q0) * x.C3, x.C3,
          x.k + static_cast<int64_t>(k0) * x.C3, x.C3, 0.0f, S.data(), kTile);
    for (int r = 0; r < nq; ++r) {
      float* s = S.data() + static_cast<size_t>(r) * kTile;
      const int n = valid_keys(q0, r, k0, nk);
      const float m_new = std::max(m[r], k.row_max(s, n));
      k.row_softmax_scaled(s, s, n, m_new, 0.0f, 1.0f);  // exp(s - m_new)
      std::fill(s + n, s + nk, 0.0f);
      float sum = 0.0f;
      for (int c = 0; c < n; ++c) sum += s[c];
      const float alpha = std::exp(m[r] - m_new);
      l[r] = l[r] * alpha + sum;
      m[r] = m_new;
      for (int d = 0; d < x.hs; ++d) acc[static_cast<size_t>(r) * x.hs + d] *= alpha;
    }
    sgemm(Trans::kNo, Trans::kNo, nq, x.hs, nk, 1.0f, S.data(), kTile, x.v + static_cast<int64_t>(k0) * x.C3, x.C3,
          1.0f, acc.data(), x.hs);
  }
  for (int r = 0; r < nq; ++r) {
    const float inv = 1.0f / l[r];
    float* o = out + static_cast<int64_t>(q0 + r) * x.C;
    for (int d = 0; d < x.hs; ++d) o[d] = acc[static_cast<size_t>(r) * x.hs + d] * inv;
    lse[q0 + r] = m[r] + std::log(l[r]);
  }
}

}  // namespace

void flash_attention_forward(float* out, float* lse, const float* qkv, int B, int T, int C, int NH) {
  const int hs = C / NH;
#pragma omp parallel
  {
    std::vector<float> S(static_cast<size_t>(kTile) * kTile), acc(static_cast<size_t>(kTile) * hs), m(kTile), l(kTile);
#pragma omp for schedule(static)
    for (int bh = 0; bh < B * NH; ++bh) {
      const int b = bh / NH, h = bh % NH;
      const Head x = head_of(qkv, b, h, T, C, NH);
      float* o = out + static_cast<int64_t>(b) * T * C + h * hs;
      for (int q0 = 0; q0 < T; q0 += kTile) {
        forward_tile(x, q0, std::min(kTile, T - q0), o, lse + static_cast<int64_t>(bh) * T, S, acc, m, l);
      }
    }
  }
}

namespace {

// One head's gradients: dq, dk, dv in the fused layout; dout and D (rowsum(dO o O)).
struct HeadGrad {
  float *dq, *dk, *dv;
  const float* dout;
  const float* D;
  const float* lse;
};

// Query tile i (rows q0..) against key tile j (rows k0..): every += of the backward.
void backward_tile(const Head& x, const HeadGrad& g, int q0, int nq, int k0, int nk, float* P, float* dP) {
  const KernelTable& k = cpu_kernels();
  sgemm(Trans::kNo, Trans::kYes, nq, nk, x.hs, x.scale, x.q + static_cast<int64_t>(q0) * x.C3, x.C3,
        x.k + static_cast<int64_t>(k0) * x.C3, x.C3, 0.0f, P, kTile);
  for (int r = 0; r < nq; ++r) {
    float* p = P + static_cast<size_t>(r) * kTile;
    const int n = valid_keys(q0, r, k0, nk);
    k.row_softmax_scaled(p, p, n, g.lse[q0 + r], 0.0f, 1.0f);  // exp(s - lse)
    std::fill(p + n, p + nk, 0.0f);
  }
  const float* dO = g.dout + static_cast<int64_t>(q0) * x.C;
  sgemm(Trans::kYes, Trans::kNo, nk, x.hs, nq, 1.0f, P, kTile, dO, x.C, 1.0f, g.dv + static_cast<int64_t>(k0) * x.C3,
        x.C3);  // dV_j += P^T dO_i
  sgemm(Trans::kNo, Trans::kYes, nq, nk, x.hs, 1.0f, dO, x.C, x.v + static_cast<int64_t>(k0) * x.C3, x.C3, 0.0f, dP,
        kTile);  // dP = dO_i V_j^T
  for (int r = 0; r < nq; ++r) {
    float* dp = dP + static_cast<size_t>(r) * kTile;
    const float* p = P + static_cast<size_t>(r) * kTile;
    const float Dr = g.D[q0 + r];
    for (int c = 0; c < nk; ++c) dp[c] = p[c] * (dp[c] - Dr) * x.scale;  // dS
  }
  sgemm(Trans::kNo, Trans::kNo, nq, x.hs, nk, 1.0f, dP, kTile, x.k + static_cast<int64_t>(k0) * x.C3, x.C3, 1.0f,
        g.dq + static_cast<int64_t>(q0) * x.C3, x.C3);  // dQ_i += dS K_j
  sgemm(Trans::kYes, Trans::kNo, nk, x.hs, nq, 1.0f, dP, kTile, x.q + static_cast<int64_t>(q0) * x.C3, x.C3, 1.0f,
        g.dk + static_cast<int64_t>(k0) * x.C3, x.C3);  // dK_j += dS^T Q_i
}

// D (T) = rowsum(dout o out) of one head; its dq, dk, dv columns zeroed.
void begin_head(const Head& x, const float* dout, const float* out, float* D, float* dq) {
  for (int t = 0; t < x.T; ++t) {
    float s = 0.0f;
    for (int d = 0; d < x.hs; ++d) s += dout[static_cast<int64_t>(t) * x.C + d] * out[static_cast<int64_t>(t) * x.C + d];
    D[t] = s;
    for (int w = 0; w < 3; ++w) std::fill_n(dq + static_cast<int64_t>(t) * x.C3 + w * x.C, x.hs, 0.0f);
  }
}

}  // namespace

void flash_attention_backward(float* dqkv, const float* dout, const float* qkv, const float* out, const float* lse,
                              int B, int T, int C, int NH) {
  const int hs = C / NH;
#pragma omp parallel
  {
    std::vector<float> P(static_cast<size_t>(kTile) * kTile), dP(P.size()), D(static_cast<size_t>(T));
#pragma omp for schedule(static)
    for (int bh = 0; bh < B * NH; ++bh) {
      const int b = bh / NH, h = bh % NH;
      const Head x = head_of(qkv, b, h, T, C, NH);
      const int64_t yoff = static_cast<int64_t>(b) * T * C + h * hs;
      float* dq = dqkv + static_cast<int64_t>(b) * T * 3 * C + h * hs;
      begin_head(x, dout + yoff, out + yoff, D.data(), dq);
      const HeadGrad g{dq, dq + C, dq + 2 * C, dout + yoff, D.data(), lse + static_cast<int64_t>(bh) * T};
      for (int k0 = 0; k0 < T; k0 += kTile) {
        for (int q0 = k0; q0 < T; q0 += kTile) {
          backward_tile(x, g, q0, std::min(kTile, T - q0), k0, std::min(kTile, T - k0), P.data(), dP.data());
        }
      }
    }
  }
}

}  // namespace zt
