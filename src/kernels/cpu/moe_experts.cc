// The experts of an MoE layer, forward and backward; see moe_experts.h.
#include "kernels/cpu/moe_experts.h"

#include "kernels/cpu/kernel_table.h"
#include "kernels/cpu/linear.h"

namespace zt {

size_t moe_experts_scratch_floats(const MoeExpertShape& s) {
  const size_t rows = static_cast<size_t>(s.capacity);
  return rows * static_cast<size_t>(s.I) * 3 + rows * static_cast<size_t>(s.C);
}

void moe_experts_forward(float* out, const MoeExpertActs& acts, const float* buf, const std::vector<MoeExpertWeights>& w,
                         const std::vector<int64_t>& fill, const MoeExpertShape& s) {
  const KernelTable& k = cpu_kernels();
  for (int e = 0; e < s.E; ++e) {
    const int64_t n = fill[static_cast<size_t>(e)];
    if (n == 0) continue;  // no token reached this expert
    const size_t xc = static_cast<size_t>(e) * s.capacity * s.C, xi = static_cast<size_t>(e) * s.capacity * s.I;
    const MoeExpertWeights& p = w[static_cast<size_t>(e)];
    linear_forward(acts.h_in + xi, buf + xc, p.in_w, p.in_b, nullptr, n, s.C, s.I);
    if (s.swiglu) {
      linear_forward(acts.h_up + xi, buf + xc, p.up_w, nullptr, nullptr, n, s.C, s.I);
      k.swiglu_forward(acts.act + xi, acts.h_in + xi, acts.h_up + xi, n * s.I);
    } else {
      k.gelu_forward(acts.act + xi, acts.h_in + xi, n * s.I);
    }
    linear_forward(out + xc, acts.act + xi, p.out_w, p.out_b, nullptr, n, s.I, s.C);
  }
}

void moe_experts_backward(float* dbuf, const std::vector<MoeExpertGrads>& g, const float* dout, const MoeExpertActs& acts,
                          const float* buf, const std::vector<MoeExpertWeights>& w, const std::vector<int64_t>& fill,
                          const MoeExpertShape& s, float* scratch) {
  const KernelTable& k = cpu_kernels();
  const size_t rows_i = static_cast<size_t>(s.capacity) * s.I;
  float* dact = scratch;
  float* dh_in = scratch + rows_i;
  float* dh_up = scratch + 2 * rows_i;
  float* dbuf_up = scratch + 3 * rows_i;
  for (int e = 0; e < s.E; ++e) {
    const int64_t n = fill[static_cast<size_t>(e)];
    if (n == 0) continue;
    const size_t xc = static_cast<size_t>(e) * s.capacity * s.C, xi = static_cast<size_t>(e) * s.capacity * s.I;
    const MoeExpertWeights& p = w[static_cast<size_t>(e)];
    const MoeExpertGrads& d = g[static_cast<size_t>(e)];
    linear_backward(dact, d.out_w, d.out_b, dout + xc, acts.act + xi, p.out_w, n, s.I, s.C);
    if (s.swiglu) {
      k.swiglu_backward(dh_in, dh_up, dact, acts.h_in + xi, acts.h_up + xi, n * s.I);
      linear_backward(dbuf + xc, d.in_w, d.in_b, dh_in, buf + xc, p.in_w, n, s.C, s.I);
      linear_backward(dbuf_up, d.up_w, nullptr, dh_up, buf + xc, p.up_w, n, s.C, s.I);
      for (int64_t i = 0; i < n * s.C; ++i) dbuf[xc + static_cast<size_t>(i)] += dbuf_up[i];
    } else {
      k.gelu_backward(dh_in, acts.h_in + xi, dact, n * s.I);
      linear_backward(dbuf + xc, d.in_w, d.in_b, dh_in, buf + xc, p.in_w, n, s.C, s.I);
    }
  }
}

}  // namespace zt
