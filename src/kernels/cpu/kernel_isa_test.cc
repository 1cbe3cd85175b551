// Every SIMD kernel against the scalar reference, on sizes with ragged tails. AdamW must
// match bit for bit (same operation order, no FMA); the others within float rounding
// (the SIMD paths sum in a different order and use FMA in their polynomials).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "core/cpu_features.h"
#include "kernels/cpu/kernel_table.h"
#include "testing/gradcheck.h"
#include "testing/isa_compare.h"

namespace zt {
namespace {

using testing::random_vector;

using testing::expect_close;
using testing::simd_isas;

TEST(KernelIsa, ReportsDetectedIsa) {
  std::printf("  detected ISA: %s, active: %s\n", isa_name(detect_isa()), isa_name(active_isa()));
  if (simd_isas().empty()) GTEST_SKIP() << "no SIMD ISA on this CPU: only the scalar path runs";
}

TEST(KernelIsa, LayerNormMatchesScalar) {
  const int N = 5, C = 67;
  auto x = random_vector(N * C, 1), w = random_vector(C, 2), b = random_vector(C, 3), dy = random_vector(N * C, 4);
  auto run = [&](Isa isa, std::vector<float>* out, std::vector<float>* grads) {
    const KernelTable& k = cpu_kernels_for(isa);
    std::vector<float> mean(N), rstd(N);
    out->assign(N * C, 0.0f);
    k.layernorm_forward(out->data(), mean.data(), rstd.data(), x.data(), w.data(), b.data(), N, C);
    grads->assign(N * C + 2 * C, 0.25f);
    k.layernorm_backward(grads->data(), grads->data() + N * C, grads->data() + N * C + C, dy.data(), x.data(),
                         w.data(), mean.data(), rstd.data(), N, C);
  };
  std::vector<float> ref_out, ref_grads;
  run(Isa::kScalar, &ref_out, &ref_grads);
  for (Isa isa : simd_isas()) {
    std::vector<float> out, grads;
    run(isa, &out, &grads);
    expect_close(out, ref_out, 1e-6, "layernorm forward", isa);
    expect_close(grads, ref_grads, 1e-5, "layernorm backward", isa);
  }
}

// The weight and bias gradients are each column's sum over the rows in row order, a multiply
// then an add (the order the GPU test bounds against, and what every ISA and thread count
// gives): bit for bit against that loop written out, with register blocks and a ragged tail.
TEST(KernelIsa, LayerNormParameterGradientsAreRowOrderSums) {
  const int N = 37;
  for (int C : {67, 768, 200}) {
    auto x = random_vector(N * C, 5), w = random_vector(C, 6), b = random_vector(C, 7), dy = random_vector(N * C, 8);
    std::vector<Isa> isas = simd_isas();
    isas.push_back(Isa::kScalar);
    for (Isa isa : isas) {
      const KernelTable& k = cpu_kernels_for(isa);
      std::vector<float> out(N * C), mean(N), rstd(N), dx(N * C), dw = random_vector(C, 9), db = random_vector(C, 10);
      std::vector<float> rw = dw, rb = db;
      k.layernorm_forward(out.data(), mean.data(), rstd.data(), x.data(), w.data(), b.data(), N, C);
      k.layernorm_backward(dx.data(), dw.data(), db.data(), dy.data(), x.data(), w.data(), mean.data(), rstd.data(), N, C);
      for (int r = 0; r < N; ++r) {
        for (int c = 0; c < C; ++c) {
          const float n = (x[r * C + c] - mean[r]) * rstd[r];
          const float term = dy[r * C + c] * n;
          rw[c] = rw[c] + term;
          rb[c] = rb[c] + dy[r * C + c];
        }
      }
      EXPECT_EQ(std::memcmp(dw.data(), rw.data(), C * sizeof(float)), 0) << isa_name(isa) << " C " << C;
      EXPECT_EQ(std::memcmp(db.data(), rb.data(), C * sizeof(float)), 0) << isa_name(isa) << " C " << C;
    }
  }
}

// RMSNorm's weight gradient likewise: each column's sum over the rows in row order of
// dout * (x * rstd), bit for bit against that loop, on every ISA.
TEST(KernelIsa, RmsNormWeightGradientIsRowOrderSums) {
  const int N = 37;
  for (int C : {67, 768}) {
    auto x = random_vector(N * C, 11), w = random_vector(C, 12), dy = random_vector(N * C, 13);
    std::vector<Isa> isas = simd_isas();
    isas.push_back(Isa::kScalar);
    for (Isa isa : isas) {
      const KernelTable& k = cpu_kernels_for(isa);
      std::vector<float> out(N * C), rstd(N), dx(N * C), dw = random_vector(C, 14);
      std::vector<float> rw = dw;
      k.rmsnorm_forward(out.data(), rstd.data(), x.data(), w.data(), N, C, 1e-5f);
      k.rmsnorm_backward(dx.data(), dw.data(), dy.data(), x.data(), w.data(), rstd.data(), N, C);
      for (int r = 0; r < N; ++r) {
        for (int c = 0; c < C; ++c) {
          const float xr = x[r * C + c] * rstd[r];
          const float term = dy[r * C + c] * xr;
          rw[c] = rw[c] + term;
        }
      }
      EXPECT_EQ(std::memcmp(dw.data(), rw.data(), C * sizeof(float)), 0) << isa_name(isa) << " C " << C;
    }
  }
}

TEST(KernelIsa, GeluMatchesScalar) {
  const int n = 1000 + 7;
  auto x = random_vector(n, 5, 3.0f), dy = random_vector(n, 6);
  for (Isa isa : simd_isas()) {
    std::vector<float> y_ref(n), y(n), d_ref(n), d(n);
    cpu_kernels_for(Isa::kScalar).gelu_forward(y_ref.data(), x.data(), n);
    cpu_kernels_for(isa).gelu_forward(y.data(), x.data(), n);
    cpu_kernels_for(Isa::kScalar).gelu_backward(d_ref.data(), x.data(), dy.data(), n);
    cpu_kernels_for(isa).gelu_backward(d.data(), x.data(), dy.data(), n);
    expect_close(y, y_ref, 1e-6, "gelu forward", isa);
    expect_close(d, d_ref, 1e-6, "gelu backward", isa);
  }
  // The scalar path itself against libm's tanh.
  std::vector<float> y(n);
  cpu_kernels_for(Isa::kScalar).gelu_forward(y.data(), x.data(), n);
  for (int i = 0; i < n; ++i) {
    const double v = x[i];
    const double ref = 0.5 * v * (1.0 + std::tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)));
    ASSERT_NEAR(y[i], ref, 2e-7 * (1.0 + std::fabs(ref))) << "at x=" << v;
  }
}

TEST(KernelIsa, AttentionSoftmaxMatchesScalar) {
  const int T = 37;
  auto s = random_vector(T * T, 7, 4.0f), dp = random_vector(T * T, 8);
  std::vector<float> p_ref = s, d_ref = dp;
  cpu_kernels_for(Isa::kScalar).attention_softmax_forward(p_ref.data(), T);
  cpu_kernels_for(Isa::kScalar).attention_softmax_backward(d_ref.data(), p_ref.data(), T, 0.5f);
  for (Isa isa : simd_isas()) {
    std::vector<float> p = s, d = dp;
    cpu_kernels_for(isa).attention_softmax_forward(p.data(), T);
    cpu_kernels_for(isa).attention_softmax_backward(d.data(), p.data(), T, 0.5f);
    expect_close(p, p_ref, 2e-6, "softmax forward", isa);
    expect_close(d, d_ref, 2e-6, "softmax backward", isa);
  }
}

TEST(KernelIsa, CrossEntropyMatchesScalar) {
  const int N = 4, V = 1001, Vp = 1024;
  auto logits = random_vector(N * Vp, 9, 5.0f);
  const std::vector<int32_t> t = {5, -1, 1000, 0};
  std::vector<float> l_ref(N), lse_ref(2 * N), d_ref(N * Vp);
  const KernelTable& ks = cpu_kernels_for(Isa::kScalar);
  ks.crossentropy_forward(l_ref.data(), lse_ref.data(), logits.data(), t.data(), N, V, Vp);
  ks.crossentropy_backward(d_ref.data(), logits.data(), lse_ref.data(), t.data(), 0.3f, N, V, Vp);
  for (Isa isa : simd_isas()) {
    std::vector<float> l(N), lse(2 * N), d(N * Vp);
    cpu_kernels_for(isa).crossentropy_forward(l.data(), lse.data(), logits.data(), t.data(), N, V, Vp);
    cpu_kernels_for(isa).crossentropy_backward(d.data(), logits.data(), lse.data(), t.data(), 0.3f, N, V, Vp);
    expect_close(l, l_ref, 1e-6, "crossentropy loss", isa);
    expect_close(d, d_ref, 1e-6, "crossentropy grad", isa);
  }
}

TEST(KernelIsa, SumSquaresMatchesScalarAndDouble) {
  const int n = 200003;
  auto x = random_vector(n, 10);
  double exact = 0.0;
  for (float v : x) exact += static_cast<double>(v) * v;
  const double ref = cpu_kernels_for(Isa::kScalar).sum_squares(x.data(), n);
  EXPECT_NEAR(ref, exact, 1e-5 * exact);
  for (Isa isa : simd_isas()) EXPECT_NEAR(cpu_kernels_for(isa).sum_squares(x.data(), n), exact, 1e-5 * exact);
}

AdamWArgs test_adamw_args() {
  AdamWArgs a;
  a.grad_scale = 0.7f;
  a.decay_factor = 1.0f - 1e-3f * 0.1f;
  a.beta1 = 0.9f;
  a.one_minus_beta1 = 0.1f;
  a.beta2 = 0.95f;
  a.one_minus_beta2 = 0.05f;
  a.bias_correction2_sqrt = 0.3f;
  a.eps = 1e-8f;
  a.neg_step_size = -1e-3f / 0.19f;
  return a;
}

// Random AdamW inputs (v >= 0), stepped by one ISA's kernel.
struct AdamWCase {
  int n;
  std::vector<float> p, g, m, v;
  AdamWCase(int count, uint64_t seed)
      : n(count),
        p(random_vector(count, seed)),
        g(random_vector(count, seed + 1)),
        m(random_vector(count, seed + 2, 0.1f)),
        v(random_vector(count, seed + 3, 0.1f)) {
    for (float& x : v) x = x * x;
  }
  void step(Isa isa, const AdamWArgs& a) { cpu_kernels_for(isa).adamw_step(p.data(), g.data(), m.data(), v.data(), n, a); }
  // p, m and v bit for bit those of `other`.
  void expect_same_state(const AdamWCase& other, Isa isa) const {
    const size_t bytes = static_cast<size_t>(n) * sizeof(float);
    EXPECT_EQ(0, std::memcmp(p.data(), other.p.data(), bytes)) << isa_name(isa);
    EXPECT_EQ(0, std::memcmp(m.data(), other.m.data(), bytes)) << isa_name(isa);
    EXPECT_EQ(0, std::memcmp(v.data(), other.v.data(), bytes)) << isa_name(isa);
  }
};

TEST(KernelIsa, AdamWBitIdenticalToScalar) {
  const AdamWCase start(100000 + 13, 11);
  const AdamWArgs a = test_adamw_args();
  AdamWCase ref = start;
  ref.step(Isa::kScalar, a);
  for (Isa isa : simd_isas()) {
    AdamWCase c = start;
    c.step(isa, a);
    c.expect_same_state(ref, isa);
  }
  // The scalar reference against the formula in double.
  for (int i = 0; i < start.n; i += 997) {
    const double gi = static_cast<double>(start.g[i]) * a.grad_scale;
    const double m = start.m[i] * 0.9 + gi * 0.1, v = start.v[i] * 0.95 + 0.05 * gi * gi;
    const double p = start.p[i] * a.decay_factor + a.neg_step_size * m / (std::sqrt(v) / 0.3 + 1e-8);
    EXPECT_NEAR(ref.p[i], p, 1e-5 * (1 + std::fabs(p)));
  }
}

// The step with the compute copy (by a narrowing function, and the bf16 form's from the
// registers): the same p, m, v as the plain step, and the copy is the narrowing of the
// updated p, over several chunks and a ragged tail, on every ISA.
TEST(KernelIsa, AdamWNarrowIsTheStepThenTheCast) {
  const AdamWCase start(3 * 16384 + 21, 21);
  const AdamWArgs a = test_adamw_args();
  AdamWCase ref = start;
  ref.step(Isa::kScalar, a);
  std::vector<uint16_t> out_ref(static_cast<size_t>(start.n));
  cpu_kernels_for(Isa::kScalar).narrow_bf16(out_ref.data(), ref.p.data(), start.n);
  std::vector<Isa> isas = simd_isas();
  isas.push_back(Isa::kScalar);
  for (Isa isa : isas) {
    AdamWCase c = start;
    std::vector<uint16_t> out(static_cast<size_t>(c.n), 0xffff);
    cpu_kernels_for(isa).adamw_step_narrow(c.p.data(), c.g.data(), c.m.data(), c.v.data(), c.n, a, out.data(),
                                           cpu_kernels_for(Isa::kScalar).narrow_bf16);
    c.expect_same_state(ref, isa);
    EXPECT_EQ(out, out_ref) << isa_name(isa);
    AdamWCase d = start;  // the bf16 form, narrowing from the registers
    std::vector<uint16_t> copy(static_cast<size_t>(d.n), 0xffff);
    cpu_kernels_for(isa).adamw_step_bf16(d.p.data(), d.g.data(), d.m.data(), d.v.data(), d.n, a, copy.data());
    d.expect_same_state(ref, isa);
    EXPECT_EQ(copy, out_ref) << isa_name(isa);
  }
}

}  // namespace
}  // namespace zt
