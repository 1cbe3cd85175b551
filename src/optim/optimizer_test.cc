// AdamW and SGD against their torch formulas; decay masks follow the TensorSpec flag.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "optim/adamw.h"
#include "optim/grad_clip.h"
#include "optim/sgd.h"

namespace zt {
namespace {

ParamTable two_tensor_table() {
  ParamTable t;
  TensorSpec w;
  w.name = "w";
  w.shape = {2, 3};
  w.weight_decay = true;
  t.add(w);
  TensorSpec b;
  b.name = "b";
  b.shape = {4};
  b.weight_decay = false;
  t.add(b);
  return t;
}

TEST(DecaySegments, IntersectRange) {
  ParamTable t = two_tensor_table();
  auto segs = decay_segments(t, {4, 8});
  ASSERT_EQ(segs.size(), 2u);
  EXPECT_EQ(segs[0].begin, 0u);
  EXPECT_EQ(segs[0].end, 2u);
  EXPECT_TRUE(segs[0].decay);
  EXPECT_EQ(segs[1].begin, 2u);
  EXPECT_EQ(segs[1].end, 4u);
  EXPECT_FALSE(segs[1].decay);
}

TEST(AdamW, TwoStepsMatchTorchFormulaAndDecayMask) {
  ParamTable t = two_tensor_table();
  AdamWOptions o;
  o.weight_decay = 0.1;
  auto created = AdamW::create(t, {0, t.numel()}, o);
  ASSERT_TRUE(created.ok());
  AdamW& opt = *created.value();
  EXPECT_EQ(opt.state_bytes(), 2 * t.numel() * sizeof(float));
  std::vector<float> p = {1, -2, 3, 0.5f, 0.25f, -1, 2, 2, 2, 2};
  std::vector<float> g = {0.1f, 0.2f, -0.3f, 0, 1, -1, 0.5f, 0.5f, 0.5f, 0.5f};
  std::vector<double> pd(p.begin(), p.end()), m(10, 0.0), v(10, 0.0);
  for (int step = 1; step <= 2; ++step) {
    StepHyper h;
    h.lr = 0.01;
    opt.step(p.data(), g.data(), h);
    for (int i = 0; i < 10; ++i) {
      const double wd = i < 6 ? 0.1 : 0.0;
      pd[i] *= 1.0 - 0.01 * wd;
      m[i] = 0.9 * m[i] + 0.1 * g[i];
      v[i] = 0.999 * v[i] + 0.001 * g[i] * g[i];
      const double bc1 = 1 - std::pow(0.9, step), bc2 = 1 - std::pow(0.999, step);
      pd[i] -= 0.01 / bc1 * m[i] / (std::sqrt(v[i]) / std::sqrt(bc2) + 1e-8);
    }
  }
  for (int i = 0; i < 10; ++i) EXPECT_NEAR(p[i], pd[i], 1e-6) << i;
  EXPECT_EQ(opt.step_count(), 2);
}

TEST(Sgd, MomentumNesterovAndL2OnDecayedOnly) {
  ParamTable t = two_tensor_table();
  SgdOptions o;
  o.momentum = 0.9;
  o.nesterov = true;
  o.weight_decay = 0.5;
  auto created = Sgd::create(t, {0, t.numel()}, o);
  ASSERT_TRUE(created.ok());
  Sgd& opt = *created.value();
  std::vector<float> p(10, 1.0f), g(10, 0.1f);
  std::vector<double> pd(10, 1.0), buf(10, 0.0);
  for (int step = 0; step < 3; ++step) {
    StepHyper h;
    h.lr = 0.1;
    opt.step(p.data(), g.data(), h);
    for (int i = 0; i < 10; ++i) {
      double gi = 0.1 + (i < 6 ? 0.5 * pd[i] : 0.0);
      buf[i] = step == 0 ? gi : 0.9 * buf[i] + gi;
      gi = gi + 0.9 * buf[i];
      pd[i] -= 0.1 * gi;
    }
  }
  for (int i = 0; i < 10; ++i) EXPECT_NEAR(p[i], pd[i], 1e-6) << i;
}

TEST(GradClip, CoefficientAndNorm) {
  std::vector<float> g = {3.0f, 4.0f};
  EXPECT_DOUBLE_EQ(std::sqrt(sum_of_squares(g.data(), g.size())), 5.0);
  EXPECT_DOUBLE_EQ(clip_coefficient(5.0, 1.0), 1.0 / (5.0 + 1e-6));
  EXPECT_DOUBLE_EQ(clip_coefficient(0.5, 1.0), 1.0);
  EXPECT_DOUBLE_EQ(clip_coefficient(50.0, 0.0), 1.0);  // 0 disables clipping
}

}  // namespace
}  // namespace zt
