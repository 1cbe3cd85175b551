// Rotary position embedding through the CPU backend's table: the cos/sin table and the
// rotation against a direct double-precision evaluation (rope_theta 10000 as Llama 2,
// 500000 as Llama 3), the properties of a rotation (pair norms kept, position 0 the
// identity, backward the inverse), HF's rotate-half pairing, a finite-difference gradient
// check, and the Meta -> HF row permutation stated in rope.h.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "backend/backend.h"
#include "testing/gradcheck.h"

namespace zt {
namespace {

using testing::expect_gradient;
using testing::random_vector;
using testing::weighted_sum;

const KernelOps& ops() { return cpu_backend().ops(); }

// HF's inv_freq = 1 / theta^(2i/HD), written independently of the kernel's pow(theta, -2i/HD).
double angle(int p, int i, int HD, double theta) { return p / std::pow(theta, 2.0 * i / HD); }

std::vector<float> table(int max_T, int HD, double theta) {
  std::vector<float> f(static_cast<size_t>(max_T) * HD);
  std::vector<double> inv(static_cast<size_t>(HD / 2));
  for (int i = 0; i < HD / 2; ++i) inv[static_cast<size_t>(i)] = std::pow(theta, -2.0 * i / HD);
  ops().rope_table(f.data(), max_T, HD, inv.data());
  return f;
}

TEST(LlamaKernelRope, TableIsCosAndSinOfDoubleAnglesRoundedOnce) {
  const int HD = 64, max_T = 4096;
  for (double theta : {10000.0, 500000.0}) {
    const std::vector<float> f = table(max_T, HD, theta);
    for (int p = 0; p < max_T; p += 13) {
      for (int i = 0; i < HD / 2; ++i) {
        const double a = angle(p, i, HD, theta);
        // One rounding of a value in [-1, 1]: at most half an ulp of 1, 2^-24 ~ 6e-8.
        ASSERT_NEAR(f[(p * HD / 2 + i) * 2], std::cos(a), 6e-8) << "theta " << theta << " p " << p << " i " << i;
        ASSERT_NEAR(f[(p * HD / 2 + i) * 2 + 1], std::sin(a), 6e-8) << "theta " << theta << " p " << p << " i " << i;
      }
    }
  }
}

// The rotation in fp32 against double: cos and sin carry one rounding each and the two
// products and the sum three more, so |err| <= ~4 * 2^-24 (|a| + |b|) < 3e-7 (|a| + |b|).
TEST(LlamaKernelRope, ForwardMatchesDoubleRotation) {
  const int B = 2, T = 9, NH = 3, HD = 16;
  const auto x = random_vector(B * T * NH * HD, 1);
  for (double theta : {10000.0, 500000.0}) {
    for (int pos0 : {0, 100}) {
      const std::vector<float> f = table(pos0 + T, HD, theta);
      std::vector<float> y(x.size());
      ops().rope_forward(y.data(), x.data(), f.data(), B, T, NH, HD, pos0);
      for (int bt = 0; bt < B * T; ++bt) {
        for (int h = 0; h < NH; ++h) {
          const int off = (bt * NH + h) * HD;
          for (int i = 0; i < HD / 2; ++i) {
            const double t = angle(pos0 + bt % T, i, HD, theta), a = x[off + i], b = x[off + i + HD / 2];
            const double tol = 3e-7 * (std::fabs(a) + std::fabs(b));
            ASSERT_NEAR(y[off + i], a * std::cos(t) - b * std::sin(t), tol) << theta << " " << pos0 << " " << off + i;
            ASSERT_NEAR(y[off + i + HD / 2], b * std::cos(t) + a * std::sin(t), tol) << theta << " " << pos0;
          }
        }
      }
    }
  }
}

TEST(LlamaKernelRope, KeepsPairNormsAndPositionZeroIsTheIdentity) {
  const int B = 2, T = 40, NH = 2, HD = 32;
  const auto x = random_vector(B * T * NH * HD, 2);
  const std::vector<float> f = table(T, HD, 500000.0);
  std::vector<float> y(x.size());
  ops().rope_forward(y.data(), x.data(), f.data(), B, T, NH, HD, 0);
  for (int bt = 0; bt < B * T; ++bt) {
    for (int h = 0; h < NH; ++h) {
      const int off = (bt * NH + h) * HD;
      for (int i = 0; i < HD / 2; ++i) {
        const double a = x[off + i], b = x[off + i + HD / 2], c = y[off + i], d = y[off + i + HD / 2];
        ASSERT_NEAR(c * c + d * d, a * a + b * b, 1e-6 * (a * a + b * b)) << "pair norm at " << off + i;
        if (bt % T == 0) {  // cos 0 = 1, sin 0 = 0 exactly: the same bits
          ASSERT_EQ(y[off + i], x[off + i]);
          ASSERT_EQ(y[off + i + HD / 2], x[off + i + HD / 2]);
        }
      }
    }
  }
}

// HF pairs dimension i with i + HD/2 (rotate_half), not with i + 1 (Meta's interleaving).
TEST(LlamaKernelRope, PairsDimensionIWithIPlusHalf) {
  const int HD = 8, T = 4;
  const std::vector<float> f = table(T, HD, 10000.0);
  for (int i = 0; i < HD; ++i) {
    std::vector<float> x(T * HD, 0.0f), y(T * HD);
    for (int t = 0; t < T; ++t) x[t * HD + i] = 1.0f;
    ops().rope_forward(y.data(), x.data(), f.data(), 1, T, 1, HD, 0);
    const int partner = (i + HD / 2) % HD;
    for (int t = 1; t < T; ++t) {
      for (int j = 0; j < HD; ++j) {
        if (j != i && j != partner) {
          EXPECT_EQ(y[t * HD + j], 0.0f) << "dim " << i << " leaked into " << j;
        }
      }
      EXPECT_NE(y[t * HD + partner], 0.0f) << "dim " << i << " did not rotate into " << partner;
    }
  }
}

TEST(LlamaKernelRope, BackwardIsTheInverseAndInPlaceMatches) {
  const int B = 3, T = 11, NH = 4, HD = 24, pos0 = 5;
  const auto x = random_vector(B * T * NH * HD, 3);
  const std::vector<float> f = table(pos0 + T, HD, 10000.0);
  std::vector<float> y(x.size()), back(x.size()), in_place = x;
  ops().rope_forward(y.data(), x.data(), f.data(), B, T, NH, HD, pos0);
  ops().rope_forward(in_place.data(), in_place.data(), f.data(), B, T, NH, HD, pos0);
  ops().rope_backward(back.data(), y.data(), f.data(), B, T, NH, HD, pos0);
  for (size_t i = 0; i < x.size(); ++i) {
    ASSERT_EQ(in_place[i], y[i]) << i;
    ASSERT_NEAR(back[i], x[i], 1e-6 * (1.0 + std::fabs(x[i]))) << i;  // R^T R = I up to cos^2 + sin^2 rounding
  }
}

// The rotation is linear, so the central difference has no truncation error; one input
// coordinate moves 2 outputs, so the fp32 rounding noise in the loss difference is
// ~2 * 2.4e-7 * |R y| / 2h < 5e-5 at h = 1e-2: atol = 1e-4, rtol = 1e-3.
TEST(LlamaKernelGradcheck, Rope) {
  const int B = 2, T = 5, NH = 3, HD = 8, pos0 = 3;
  auto x = random_vector(B * T * NH * HD, 4), r = random_vector(B * T * NH * HD, 5);
  const std::vector<float> f = table(pos0 + T, HD, 10000.0);
  std::vector<float> out(x.size());
  auto loss = [&] {
    ops().rope_forward(out.data(), x.data(), f.data(), B, T, NH, HD, pos0);
    return weighted_sum(out.data(), r);
  };
  std::vector<float> dx(x.size());
  ops().rope_backward(dx.data(), r.data(), f.data(), B, T, NH, HD, pos0);
  expect_gradient("rope dinp", x.data(), x.size(), dx, loss, 1e-2f, 1e-3, 1e-4, 240);
}

// Meta's interleaved RoPE in double: pair (x[2i], x[2i+1]) by angle(p, i) (llama/model.py's
// view_as_complex(x.reshape(..., -1, 2)) * freqs_cis).
std::vector<double> meta_rope(const float* x, int p, int HD, double theta) {
  std::vector<double> y(HD);
  for (int i = 0; i < HD / 2; ++i) {
    const double t = angle(p, i, HD, theta), a = x[2 * i], b = x[2 * i + 1];
    y[2 * i] = a * std::cos(t) - b * std::sin(t);
    y[2 * i + 1] = a * std::sin(t) + b * std::cos(t);
  }
  return y;
}

// Permuting each head's rows as rope.h states (HF j <- Meta 2j, HF HD/2 + j <- Meta 2j + 1)
// turns Meta's rotated q into ours, element for element, so every q.k score is unchanged.
TEST(LlamaKernelRope, MetaInterleavedMapsToRotateHalfByTheRowPermutation) {
  const int T = 7, NH = 2, HD = 16;
  const double theta = 500000.0;
  const auto q_meta = random_vector(T * NH * HD, 6), k_meta = random_vector(T * NH * HD, 7);
  std::vector<float> q_hf(q_meta.size()), k_hf(k_meta.size());
  for (int row = 0; row < T * NH; ++row) {
    for (int j = 0; j < HD / 2; ++j) {
      q_hf[row * HD + j] = q_meta[row * HD + 2 * j];
      q_hf[row * HD + HD / 2 + j] = q_meta[row * HD + 2 * j + 1];
      k_hf[row * HD + j] = k_meta[row * HD + 2 * j];
      k_hf[row * HD + HD / 2 + j] = k_meta[row * HD + 2 * j + 1];
    }
  }
  const std::vector<float> f = table(T, HD, theta);
  ops().rope_forward(q_hf.data(), q_hf.data(), f.data(), 1, T, NH, HD, 0);
  ops().rope_forward(k_hf.data(), k_hf.data(), f.data(), 1, T, NH, HD, 0);
  for (int h = 0; h < NH; ++h) {
    for (int tq = 0; tq < T; ++tq) {
      const std::vector<double> q = meta_rope(q_meta.data() + (tq * NH + h) * HD, tq, HD, theta);
      for (int j = 0; j < HD / 2; ++j) {
        ASSERT_NEAR(q_hf[(tq * NH + h) * HD + j], q[2 * j], 1e-6);
        ASSERT_NEAR(q_hf[(tq * NH + h) * HD + HD / 2 + j], q[2 * j + 1], 1e-6);
      }
      for (int tk = 0; tk <= tq; ++tk) {
        const std::vector<double> k = meta_rope(k_meta.data() + (tk * NH + h) * HD, tk, HD, theta);
        double s_meta = 0.0, s_hf = 0.0;
        for (int d = 0; d < HD; ++d) {
          s_meta += q[d] * k[d];
          s_hf += static_cast<double>(q_hf[(tq * NH + h) * HD + d]) * k_hf[(tk * NH + h) * HD + d];
        }
        EXPECT_NEAR(s_hf, s_meta, 1e-5) << "score head " << h << " q " << tq << " k " << tk;
      }
    }
  }
}

}  // namespace
}  // namespace zt
