// Finite-difference gradient checks for every layer's backward (acceptance: issue 2,
// item 1). Each layer's scalar loss is sum(out * R) for a fixed random R, so its
// analytic gradient is backward(dout = R).
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "backend/backend.h"
#include "testing/gradcheck.h"

namespace zt {
namespace {

// Every op is checked through the CPU backend's kernel table, as the model calls it.
const KernelOps& ops() { return cpu_backend().ops(); }

using testing::expect_gradient;
using testing::random_vector;
using testing::weighted_sum;

TEST(LayerGradcheck, LayerNorm) {
  const int N = 6, C = 37;  // C not a multiple of any vector width: exercises tails
  auto x = random_vector(N * C, 1), w = random_vector(C, 2), b = random_vector(C, 3), r = random_vector(N * C, 4);
  std::vector<float> out(N * C), mean(N), rstd(N);
  auto loss = [&] {
    ops().layernorm_forward(out.data(), mean.data(), rstd.data(), x.data(), w.data(), b.data(), N, C);
    return weighted_sum(out.data(), r);
  };
  loss();
  std::vector<float> dx(N * C, 0.0f), dw(C, 0.0f), db(C, 0.0f);
  ops().layernorm_backward(dx.data(), dw.data(), db.data(), r.data(), x.data(), w.data(), mean.data(), rstd.data(), N, C);
  expect_gradient("layernorm dinp", x.data(), x.size(), dx, loss);
  expect_gradient("layernorm dweight", w.data(), w.size(), dw, loss);
  expect_gradient("layernorm dbias", b.data(), b.size(), db, loss);
}

TEST(LayerGradcheck, Linear) {
  const int N = 5, C = 19, OC = 23;
  auto x = random_vector(N * C, 5), w = random_vector(OC * C, 6, 0.3f), b = random_vector(OC, 7);
  auto res = random_vector(N * OC, 8), r = random_vector(N * OC, 9);
  std::vector<float> out(N * OC);
  auto loss = [&] {
    ops().linear_forward(out.data(), x.data(), w.data(), b.data(), res.data(), N, C, OC);
    return weighted_sum(out.data(), r);
  };
  std::vector<float> dx(N * C), dw(OC * C, 0.0f), db(OC, 0.0f);
  ops().linear_backward(dx.data(), dw.data(), db.data(), r.data(), x.data(), w.data(), N, C, OC);
  expect_gradient("linear dinp", x.data(), x.size(), dx, loss);
  expect_gradient("linear dweight", w.data(), w.size(), dw, loss);
  expect_gradient("linear dbias", b.data(), b.size(), db, loss);
  expect_gradient("linear dresidual", res.data(), res.size(), r, loss);  // residual passes dout through
}

TEST(LayerGradcheck, Gelu) {
  const int n = 77;
  auto x = random_vector(n, 10, 2.0f), r = random_vector(n, 11);
  std::vector<float> out(n);
  auto loss = [&] {
    ops().gelu_forward(out.data(), x.data(), n);
    return weighted_sum(out.data(), r);
  };
  std::vector<float> dx(n);
  ops().gelu_backward(dx.data(), x.data(), r.data(), n);
  expect_gradient("gelu dinp", x.data(), x.size(), dx, loss, 1e-2f, 1e-2, 1e-3);
}

TEST(LayerGradcheck, Attention) {
  const int B = 2, T = 7, C = 12, NH = 3;
  auto qkv = random_vector(B * T * 3 * C, 12), r = random_vector(B * T * C, 13);
  std::vector<float> out(B * T * C), att(B * NH * T * T);
  auto loss = [&] {
    ops().attention_forward(out.data(), att.data(), qkv.data(), B, T, C, NH);
    return weighted_sum(out.data(), r);
  };
  loss();
  std::vector<float> dqkv(qkv.size());
  ops().attention_backward(dqkv.data(), r.data(), qkv.data(), att.data(), B, T, C, NH);
  expect_gradient("attention dqkv", qkv.data(), qkv.size(), dqkv, loss, 1e-2f, 1e-2, 1e-4, 200);
  // Causality: no output at position t depends on inputs after t.
  for (int b = 0; b < B; ++b) {
    for (int h = 0; h < NH; ++h) {
      const float* P = att.data() + ((b * NH + h) * T) * T;
      for (int i = 0; i < T; ++i) {
        double row = 0.0;
        for (int j = 0; j < T; ++j) {
          if (j > i) {
            EXPECT_EQ(P[i * T + j], 0.0f);
          }
          row += P[i * T + j];
        }
        EXPECT_NEAR(row, 1.0, 1e-6);
      }
    }
  }
}

TEST(LayerGradcheck, CrossEntropyWithIgnoreAndPadding) {
  const int N = 6, V = 29, Vp = 32;
  auto logits = random_vector(N * Vp, 14, 3.0f);
  const std::vector<int32_t> targets = {3, kIgnoreIndex, 28, 0, kIgnoreIndex, 17};
  std::vector<float> losses(N), lse(2 * N);
  const float dloss = 1.0f / 4.0f;  // mean over the 4 counted rows
  auto loss = [&] {
    ops().crossentropy_forward(losses.data(), lse.data(), logits.data(), targets.data(), N, V, Vp);
    double s = 0.0;
    for (float l : losses) s += l;
    return s * dloss;
  };
  loss();
  // Reference loss in double.
  for (int r = 0; r < N; ++r) {
    if (targets[r] < 0) {
      EXPECT_EQ(losses[r], 0.0f);
      continue;
    }
    double m = -1e30, s = 0.0;
    for (int j = 0; j < V; ++j) m = std::max(m, static_cast<double>(logits[r * Vp + j]));
    for (int j = 0; j < V; ++j) s += std::exp(logits[r * Vp + j] - m);
    EXPECT_NEAR(losses[r], m + std::log(s) - logits[r * Vp + targets[r]], 1e-5);
  }
  std::vector<float> dlogits(N * Vp);
  ops().crossentropy_backward(dlogits.data(), logits.data(), lse.data(), targets.data(), dloss, N, V, Vp);
  for (int r = 0; r < N; ++r) {
    for (int j = V; j < Vp; ++j) EXPECT_EQ(dlogits[r * Vp + j], 0.0f) << "padding column got a gradient";
    if (targets[r] < 0) {
      for (int j = 0; j < Vp; ++j) EXPECT_EQ(dlogits[r * Vp + j], 0.0f) << "ignored row got a gradient";
    }
  }
  expect_gradient("crossentropy dlogits", logits.data(), logits.size(), dlogits, loss, 1e-2f, 1e-2, 1e-5, 192);
}

TEST(LayerGradcheck, Encoder) {
  const int B = 2, T = 5, C = 9, V = 7, maxT = 8;
  auto wte = random_vector(V * C, 15), wpe = random_vector(maxT * C, 16), r = random_vector(B * T * C, 17);
  const std::vector<int32_t> tokens = {1, 3, 3, 0, 6, 2, 1, 1, 5, 4};  // repeats: accumulation
  std::vector<float> out(B * T * C);
  auto loss = [&] {
    ops().encoder_forward(out.data(), tokens.data(), wte.data(), wpe.data(), B, T, C);
    return weighted_sum(out.data(), r);
  };
  std::vector<float> dwte(V * C, 0.0f), dwpe(maxT * C, 0.0f);
  ops().encoder_backward(dwte.data(), dwpe.data(), r.data(), tokens.data(), B, T, C);
  expect_gradient("encoder dwte", wte.data(), wte.size(), dwte, loss, 1e-2f, 1e-3, 1e-4, 64);
  expect_gradient("encoder dwpe", wpe.data(), wpe.size(), dwpe, loss, 1e-2f, 1e-3, 1e-4, 72);
}

}  // namespace
}  // namespace zt
