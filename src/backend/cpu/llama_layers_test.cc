// RMSNorm and SwiGLU (the Llama layers' elementwise and row kernels, rope_test.cc has RoPE),
// through the CPU backend's table as the model calls them:
// - gradient checks: central finite differences of the scalar loss sum(out * R) (summed in
//   double by testing::weighted_sum) against the analytic backward with dout = R;
// - forward values against a direct double-precision evaluation of the formula;
// - every SIMD instantiation against the scalar one.
//
// Gradient-check tolerance (h = 1e-2, inputs O(1)): the central difference's truncation
// error is h^2/6 |f'''| ~ 2e-5 |f'''|, well inside rtol = 1e-2 for these smooth functions.
// The rounding noise of the fp32 forward enters the numeric gradient as
// sum_j |R_j| |dy_j| / 2h over the outputs that one coordinate moves, each |dy_j| <= ~2 ulp
// of |y_j| ~ 2.4e-7 |y_j| (outputs of rows the coordinate does not touch are bit-identical
// in both evaluations and cancel). SwiGLU moves 1 output: noise <= ~3e-5, so atol = 1e-4.
// RMSNorm moves the C outputs of its row: at C = 37, sum |R_j y_j| <~ 37 gives a worst
// case 37 * 2.4e-7 / 2e-2 ~ 4.4e-4 (typically ~sqrt(37) times less), so atol = 5e-4.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "backend/backend.h"
#include "core/cpu_features.h"
#include "kernels/cpu/kernel_table.h"
#include "testing/gradcheck.h"
#include "testing/isa_compare.h"

namespace zt {
namespace {

using testing::expect_gradient;
using testing::random_vector;
using testing::weighted_sum;

const KernelOps& ops() { return cpu_backend().ops(); }

// y = x / sqrt(mean(x^2) + eps) * w for one row, in double (HF LlamaRMSNorm).
std::vector<double> rmsnorm_reference(const float* x, const float* w, int C, double eps, double* rstd) {
  double ss = 0.0;
  for (int c = 0; c < C; ++c) ss += static_cast<double>(x[c]) * x[c];
  *rstd = 1.0 / std::sqrt(ss / C + eps);
  std::vector<double> y(C);
  for (int c = 0; c < C; ++c) y[c] = x[c] * *rstd * w[c];
  return y;
}

double silu_times_up(double g, double u) { return g / (1.0 + std::exp(-g)) * u; }

TEST(LlamaKernelGradcheck, RmsNorm) {
  const int N = 6, C = 37;  // C not a multiple of any vector width: exercises tails
  const float eps = 1e-5f;
  auto x = random_vector(N * C, 1), w = random_vector(C, 2), r = random_vector(N * C, 3);
  std::vector<float> out(N * C), rstd(N);
  auto loss = [&] {
    ops().rmsnorm_forward(out.data(), rstd.data(), x.data(), w.data(), N, C, eps);
    return weighted_sum(out.data(), r);
  };
  loss();
  std::vector<float> dx(N * C, 0.0f), dw(C, 0.0f);
  ops().rmsnorm_backward(dx.data(), dw.data(), r.data(), x.data(), w.data(), rstd.data(), N, C);
  expect_gradient("rmsnorm dinp", x.data(), x.size(), dx, loss, 1e-2f, 1e-2, 5e-4, 111);
  expect_gradient("rmsnorm dweight", w.data(), w.size(), dw, loss, 1e-2f, 1e-2, 5e-4);
}

TEST(LlamaKernelGradcheck, RmsNormBackwardAccumulatesDinpAndDweight) {
  const int N = 3, C = 19;
  auto x = random_vector(N * C, 4), w = random_vector(C, 5), dy = random_vector(N * C, 6);
  auto dx0 = random_vector(N * C, 7), dw0 = random_vector(C, 8);
  std::vector<float> out(N * C), rstd(N);
  ops().rmsnorm_forward(out.data(), rstd.data(), x.data(), w.data(), N, C, 1e-6f);
  std::vector<float> dx(N * C, 0.0f), dw(C, 0.0f), dx_acc = dx0, dw_acc = dw0;
  ops().rmsnorm_backward(dx.data(), dw.data(), dy.data(), x.data(), w.data(), rstd.data(), N, C);
  ops().rmsnorm_backward(dx_acc.data(), dw_acc.data(), dy.data(), x.data(), w.data(), rstd.data(), N, C);
  // dinp gets one addition per element (exact comparison); dweight adds row by row onto dw0,
  // another order than dw0 + (sum of rows), so within a few ulp of the O(1) values.
  for (int i = 0; i < N * C; ++i) EXPECT_EQ(dx_acc[i], dx0[i] + dx[i]) << "dinp is on the residual stream: +=";
  for (int c = 0; c < C; ++c) EXPECT_NEAR(dw_acc[c], dw0[c] + dw[c], 1e-5) << "dweight accumulates: +=";
}

TEST(LlamaKernelGradcheck, SwiGlu) {
  const int n = 77;
  auto g = random_vector(n, 9, 3.0f), u = random_vector(n, 10), r = random_vector(n, 11);
  std::vector<float> out(n);
  auto loss = [&] {
    ops().swiglu_forward(out.data(), g.data(), u.data(), n);
    return weighted_sum(out.data(), r);
  };
  std::vector<float> dg(n), du(n);
  ops().swiglu_backward(dg.data(), du.data(), r.data(), g.data(), u.data(), n);
  expect_gradient("swiglu dgate", g.data(), g.size(), dg, loss, 1e-2f, 1e-2, 1e-4, 77);
  expect_gradient("swiglu dup", u.data(), u.size(), du, loss, 1e-2f, 1e-2, 1e-4, 77);
}

// fp32 statistics against the double formula: the sum of C squares carries a relative
// error below C * 2^-24 in the worst case (~3e-5 at C = 576, ~1e-6 typically), halved by the
// square root; each output adds two roundings. 4e-6 relative covers the typical case with margin.
TEST(LlamaKernelForward, RmsNormMatchesDoubleFormula) {
  for (int C : {37, 576}) {
    const int N = 5;
    const double eps = 1e-5;
    auto x = random_vector(N * C, 12 + C, 2.0f), w = random_vector(C, 13);
    std::vector<float> out(N * C), rstd(N);
    ops().rmsnorm_forward(out.data(), rstd.data(), x.data(), w.data(), N, C, static_cast<float>(eps));
    for (int r = 0; r < N; ++r) {
      double rstd_ref;
      const std::vector<double> y = rmsnorm_reference(x.data() + r * C, w.data(), C, eps, &rstd_ref);
      EXPECT_NEAR(rstd[r], rstd_ref, 4e-6 * rstd_ref) << "C=" << C << " row " << r;
      for (int c = 0; c < C; ++c) {
        ASSERT_NEAR(out[r * C + c], y[c], 4e-6 * (std::fabs(y[c]) + 1e-3)) << "C=" << C << " at " << r << "," << c;
      }
    }
  }
}

// eps is added to the mean square inside the square root (HF), not to the RMS: with
// x = 1e-3 everywhere and eps = 1e-5, rstd = 1/sqrt(1e-6 + 1e-5) = 301.5, whereas
// 1/(1e-3 + 1e-5) would be 990. A zero row gives rstd = 1/sqrt(eps) and a zero output.
TEST(LlamaKernelForward, RmsNormEpsIsInsideTheSquareRoot) {
  const int C = 24;
  std::vector<float> x(2 * C, 1e-3f), w(C, 1.0f), out(2 * C), rstd(2);
  for (int c = 0; c < C; ++c) x[C + c] = 0.0f;
  ops().rmsnorm_forward(out.data(), rstd.data(), x.data(), w.data(), 2, C, 1e-5f);
  const double want = 1.0 / std::sqrt(1e-6 + 1e-5);
  EXPECT_NEAR(rstd[0], want, 1e-5 * want);
  EXPECT_NEAR(out[0], 1e-3 * want, 1e-5);
  EXPECT_NEAR(rstd[1], 1.0 / std::sqrt(1e-5), 1e-5 / std::sqrt(1e-5));
  for (int c = 0; c < C; ++c) EXPECT_EQ(out[C + c], 0.0f);
}

// silu * up against the double formula; vexp is accurate to a few ulp, so 1e-6 relative
// (plus a 1e-30 floor for the far negative tail, where silu(g) ~ g e^g underflows).
TEST(LlamaKernelForward, SwiGluMatchesDoubleFormula) {
  const int n = 1000 + 5;
  auto g = random_vector(n, 14, 4.0f), u = random_vector(n, 15);
  const float extremes[] = {0.0f, -0.0f, 1e-6f, -100.0f, 100.0f, -20.0f, 20.0f, 88.0f, -88.0f};
  for (int i = 0; i < 9; ++i) g[i] = extremes[i];
  std::vector<float> out(n);
  ops().swiglu_forward(out.data(), g.data(), u.data(), n);
  for (int i = 0; i < n; ++i) {
    const double ref = silu_times_up(g[i], u[i]);
    ASSERT_TRUE(std::isfinite(out[i])) << "g=" << g[i];
    ASSERT_NEAR(out[i], ref, 1e-6 * std::fabs(ref) + 1e-30) << "g=" << g[i] << " u=" << u[i];
  }
  // Backward at the extremes stays finite: dgate -> dout * up (g >> 0) or 0 (g << 0).
  std::vector<float> dy(n, 1.0f), dg(n), du(n);
  ops().swiglu_backward(dg.data(), du.data(), dy.data(), g.data(), u.data(), n);
  EXPECT_NEAR(dg[4], u[4], 1e-6 * std::fabs(u[4]));  // g = 100
  EXPECT_NEAR(dg[3], 0.0f, 1e-30);                    // g = -100
  EXPECT_NEAR(dg[0], 0.5 * u[0], 1e-7);               // silu'(0) = 1/2
}

TEST(LlamaKernelForward, SwiGluBackwardInPlace) {
  const int n = 203;
  auto g = random_vector(n, 16, 3.0f), u = random_vector(n, 17), dy = random_vector(n, 18);
  std::vector<float> dg(n), du(n), g2 = g, u2 = u;
  ops().swiglu_backward(dg.data(), du.data(), dy.data(), g.data(), u.data(), n);
  ops().swiglu_backward(g2.data(), u2.data(), dy.data(), g2.data(), u2.data(), n);  // over gate and up
  for (int i = 0; i < n; ++i) {
    ASSERT_EQ(g2[i], dg[i]) << i;
    ASSERT_EQ(u2[i], du[i]) << i;
  }
}

using testing::expect_close;
using testing::simd_isas;

TEST(LlamaKernelIsa, RmsNormMatchesScalar) {
  const int N = 5, C = 67;
  auto x = random_vector(N * C, 19), w = random_vector(C, 20), dy = random_vector(N * C, 21);
  auto run = [&](Isa isa, std::vector<float>* out, std::vector<float>* grads) {
    const KernelTable& k = cpu_kernels_for(isa);
    std::vector<float> rstd(N);
    out->assign(N * C, 0.0f);
    k.rmsnorm_forward(out->data(), rstd.data(), x.data(), w.data(), N, C, 1e-5f);
    grads->assign(N * C + C, 0.25f);
    k.rmsnorm_backward(grads->data(), grads->data() + N * C, dy.data(), x.data(), w.data(), rstd.data(), N, C);
  };
  std::vector<float> ref_out, ref_grads;
  run(Isa::kScalar, &ref_out, &ref_grads);
  if (simd_isas().empty()) GTEST_SKIP() << "no SIMD ISA on this CPU";
  for (Isa isa : simd_isas()) {
    std::vector<float> out, grads;
    run(isa, &out, &grads);
    expect_close(out, ref_out, 1e-6, "rmsnorm forward", isa);
    expect_close(grads, ref_grads, 1e-5, "rmsnorm backward", isa);
  }
}

TEST(LlamaKernelIsa, SwiGluMatchesScalar) {
  const int n = 1000 + 7;
  auto g = random_vector(n, 22, 3.0f), u = random_vector(n, 23), dy = random_vector(n, 24);
  const KernelTable& s = cpu_kernels_for(Isa::kScalar);
  std::vector<float> y_ref(n), dg_ref(n), du_ref(n);
  s.swiglu_forward(y_ref.data(), g.data(), u.data(), n);
  s.swiglu_backward(dg_ref.data(), du_ref.data(), dy.data(), g.data(), u.data(), n);
  if (simd_isas().empty()) GTEST_SKIP() << "no SIMD ISA on this CPU";
  for (Isa isa : simd_isas()) {
    std::vector<float> y(n), dg(n), du(n);
    cpu_kernels_for(isa).swiglu_forward(y.data(), g.data(), u.data(), n);
    cpu_kernels_for(isa).swiglu_backward(dg.data(), du.data(), dy.data(), g.data(), u.data(), n);
    expect_close(y, y_ref, 1e-6, "swiglu forward", isa);
    expect_close(dg, dg_ref, 1e-6, "swiglu dgate", isa);
    expect_close(du, du_ref, 1e-6, "swiglu dup", isa);
  }
}

}  // namespace
}  // namespace zt
