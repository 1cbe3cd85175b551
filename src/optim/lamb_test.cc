// LAMB (lamb.h) against tests/optim/lamb_reference.py, an independent float64 statement
// of DeepSpeed's FusedLamb; the kernel's ISA paths against the scalar one, bit for bit;
// the whole-tensor invariant.
//
// Tolerance (fp32 kernel vs float64 reference), first order in u = 2^-24, t <= 5 steps:
//  (1) m: per step g * grad_scale, two products, one sum, and float(b1), float(1 - b1):
//      |dm| <= 5u t M <= 25u M, where M is the EMA of |g| (MSCALE; not |m|, which may cancel).
//  (2) v: every term positive, 6 roundings per step: |dv| / v <= 30u (the v check: 64u v).
//  (3) m / denom: denom = sqrt(v) + eps (or sqrt(v + eps)) is within 15u + 2u relative,
//      the quotient 1u more: |d(m/denom)| <= 43u M / denom.
//  (4) u = m/denom + decay p: 2u more, so |du_i| <= 45u uabs_i, uabs_i = M_i/denom_i + |decay p_i|
//      (p's own error is carried in (7)).
//  (5) Norms: squares exact in double, sums n 2^-53 (negligible). | ||u~|| - ||u|| | <= ||du||
//      <= 45u ||uabs||, so the unclamped ratio is within 45u CANCEL + d||p||/||p|| relative,
//      CANCEL = ||uabs|| / ||u|| (printed per step by the reference); a clamped ratio is exact.
//  (6) float(-(step_size coeff)) 1u, the product with u 1u, the sum into p 1u of |p|.
//  (7) Per step |dp'| <= |dp| (1 + s c decay) + u |p'| + s c (|du_i| + |u_i| (dc/c + 2u)):
//      over five steps about (5 + 45 + 45 + 10)u of PSCALE = max|p| + sum_t s_t c_t
//      max(uabs) (1 + CANCEL), computed by the reference. We allow 128u PSCALE for p and
//      64u MSCALE for m; the ratios allow 128u c (1 + CANCEL). The observed worst case is
//      printed in units of u * scale (a few units in practice).
// The kernel is written so that every ISA computes the same bits (lamb_impl.h): no FMA, a
// fixed operation order, sums of exact squares in double over fixed lanes and chunks.
#include <gtest/gtest.h>

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "core/cpu_features.h"
#include "kernels/cpu/kernel_table.h"
#include "optim/lamb.h"
#include "testing/gradcheck.h"
#include "testing/launch.h"

namespace zt {
namespace {

using testing::random_vector;

constexpr double kU = 1.0 / (1 << 24);  // fp32 unit roundoff
constexpr int kSteps = 5;

struct TestTensor {
  const char* name;
  std::vector<int64_t> shape;
  bool decay;
  float init_scale;  // N(0, init_scale); 0: all zeros
};

// One tensor per branch of the trust ratio: unclamped (0, 4, 5), zero norm -> 1 (1),
// ratio above max_coeff (2), below min_coeff (3); tensor 4 spans two kernel chunks.
const std::vector<TestTensor> kTensors = {
    {"h.attn.w", {7, 9}, true, 0.5f},  {"h.attn.b", {13}, false, 0.0f},
    {"wpe", {5, 11}, false, 100.0f},   {"h.mlp.w", {3, 17}, true, 1e-4f},
    {"h.mlp.w2", {160, 130}, true, 0.02f}, {"ln.b", {37}, false, 0.1f},
};

ParamTable test_table() {
  ParamTable t;
  for (const TestTensor& x : kTensors) {
    TensorSpec s;
    s.name = x.name;
    s.shape = x.shape;
    s.weight_decay = x.decay;
    t.add(s);
  }
  return t;
}

struct Problem {
  LambOptions o;
  double grad_scale = 0.8;
  std::vector<float> p0;
  std::vector<std::vector<float>> grads;  // per step, the whole arena
};

Problem make_problem(const LambOptions& o) {
  const ParamTable t = test_table();
  Problem pr;
  pr.o = o;
  pr.p0.resize(t.numel());
  for (size_t i = 0; i < kTensors.size(); ++i) {
    const TensorSpec& s = t.specs()[i];
    const std::vector<float> x = random_vector(s.numel, 100 + i, kTensors[i].init_scale);
    std::copy(x.begin(), x.end(), pr.p0.begin() + static_cast<std::ptrdiff_t>(s.offset));
  }
  for (int step = 0; step < kSteps; ++step) pr.grads.push_back(random_vector(t.numel(), 200 + step, 0.3f));
  return pr;
}

struct Reference {
  std::vector<std::vector<double>> coeff, cancel;  // [step][tensor]
  std::vector<std::vector<double>> p, m, v;        // [tensor][element]
  std::vector<double> pscale, mscale;              // [tensor]
};

Reference run_reference(const Problem& pr, const std::string& tag) {
  const ParamTable t = test_table();
  const std::string in = ::testing::TempDir() + "zt_lamb_" + tag + ".in";
  {
    std::ofstream f(in);
    char buf[64];
    auto put = [&](double x) {
      std::snprintf(buf, sizeof(buf), "%.17g ", x);
      f << buf;
    };
    const LambOptions& o = pr.o;
    for (double x : {o.lr, o.beta1, o.beta2, o.eps, o.weight_decay, o.bias_correction ? 1.0 : 0.0,
                     o.eps_inside_sqrt ? 1.0 : 0.0, o.max_coeff, o.min_coeff, pr.grad_scale})
      put(x);
    f << kSteps << "\n" << t.specs().size() << "\n";
    for (const TensorSpec& s : t.specs()) {
      f << s.numel << " " << (s.weight_decay ? 1 : 0) << "\n";
      for (size_t i = 0; i < s.numel; ++i) put(pr.p0[s.offset + i]);  // floats print exactly in 17 digits
      f << "\n";
      for (const std::vector<float>& g : pr.grads) {
        for (size_t i = 0; i < s.numel; ++i) put(g[s.offset + i]);
        f << "\n";
      }
    }
  }
  const std::string cmd = "python3 " + std::string(ZT_SOURCE_DIR) + "/tests/optim/lamb_reference.py " + in;
  std::string out;
  EXPECT_EQ(testing::run_logged(cmd, ::testing::TempDir() + "zt_lamb_" + tag + ".log", &out), 0) << out;
  const size_t T = t.specs().size();
  Reference r;
  r.coeff.assign(kSteps, std::vector<double>(T));
  r.cancel = r.coeff;
  r.p.resize(T);
  r.m.resize(T);
  r.v.resize(T);
  r.pscale.resize(T);
  r.mscale.resize(T);
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream w(line);
    std::string kind;
    w >> kind;
    if (kind == "coeff") {
      int step = 0;
      size_t i = 0;
      w >> step >> i;
      w >> r.coeff.at(step - 1).at(i) >> r.cancel.at(step - 1).at(i);
    } else if (kind == "p" || kind == "m" || kind == "v") {
      size_t i = 0;
      w >> i;
      std::vector<double>& dst = (kind == "p" ? r.p : kind == "m" ? r.m : r.v).at(i);
      for (double x; w >> x;) dst.push_back(x);
    } else if (kind == "scale") {
      size_t i = 0;
      w >> i;
      w >> r.pscale.at(i) >> r.mscale.at(i);
    }
  }
  return r;
}

// Five steps of zerotrain's LAMB on the problem against the reference.
void expect_matches_reference(const LambOptions& o, const std::string& tag) {
  const Problem pr = make_problem(o);
  const Reference ref = run_reference(pr, tag);
  const ParamTable t = test_table();
  auto created = Lamb::create(t, {0, t.numel()}, o);
  ASSERT_TRUE(created.ok()) << created.status().message();
  Lamb& opt = *created.value();
  std::vector<float> p = pr.p0;
  for (int step = 0; step < kSteps; ++step) {
    StepHyper h;
    h.lr = o.lr;
    h.grad_scale = pr.grad_scale;
    opt.step(p.data(), pr.grads[static_cast<size_t>(step)].data(), h);
    ASSERT_EQ(opt.trust_ratios().size(), t.specs().size());
    for (size_t i = 0; i < t.specs().size(); ++i) {
      const double c = opt.trust_ratios()[i], rc = ref.coeff[static_cast<size_t>(step)][i];
      if (rc == 1.0 || rc == o.min_coeff || rc == o.max_coeff) {
        EXPECT_EQ(c, rc) << tag << " step " << step + 1 << " tensor " << kTensors[i].name;
      } else {
        EXPECT_NEAR(c, rc, 128 * kU * rc * (1 + ref.cancel[static_cast<size_t>(step)][i]))
            << tag << " step " << step + 1 << " tensor " << kTensors[i].name;
      }
    }
  }
  EXPECT_EQ(opt.step_count(), kSteps);
  const std::vector<StateTensor> st = opt.state();
  ASSERT_EQ(st.size(), 2u);
  double worst_p = 0, worst_m = 0, worst_v = 0;  // in units of u * scale
  for (size_t k = 0; k < t.specs().size(); ++k) {
    const TensorSpec& s = t.specs()[k];
    ASSERT_EQ(ref.p[k].size(), s.numel) << tag;
    for (size_t i = 0; i < s.numel; ++i) {
      const size_t j = s.offset + i;
      const double ep = std::fabs(p[j] - ref.p[k][i]), em = std::fabs(st[0].data[j] - ref.m[k][i]);
      const double ev = std::fabs(st[1].data[j] - ref.v[k][i]);
      ASSERT_LE(ep, 128 * kU * ref.pscale[k]) << tag << " p of " << s.name << "[" << i << "]";
      ASSERT_LE(em, 64 * kU * ref.mscale[k]) << tag << " m of " << s.name << "[" << i << "]";
      ASSERT_LE(ev, 64 * kU * ref.v[k][i] + 1e-40) << tag << " v of " << s.name << "[" << i << "]";
      worst_p = std::max(worst_p, ep / (kU * ref.pscale[k]));
      worst_m = std::max(worst_m, em / (kU * ref.mscale[k]));
      if (ref.v[k][i] > 0) worst_v = std::max(worst_v, ev / (kU * ref.v[k][i]));
    }
  }
  std::printf("  %s: worst |error| / (u scale): p %.2f (allowed 128), m %.2f (64), v %.2f (64)\n", tag.c_str(), worst_p,
              worst_m, worst_v);
}

LambOptions test_options() {
  LambOptions o;
  o.lr = 0.05;
  o.weight_decay = 0.1;
  return o;
}

TEST(Lamb, FiveStepsMatchDeepSpeedReference) {
  const LambOptions o = test_options();
  expect_matches_reference(o, "default");
  // The data reach every branch of the trust ratio on the first step.
  const Problem pr = make_problem(o);
  const ParamTable t = test_table();
  auto opt = Lamb::create(t, {0, t.numel()}, o).value();
  std::vector<float> p = pr.p0;
  StepHyper h;
  h.lr = o.lr;
  opt->step(p.data(), pr.grads[0].data(), h);
  const std::vector<double>& c = opt->trust_ratios();
  EXPECT_GT(c[0], o.min_coeff);
  EXPECT_LT(c[0], o.max_coeff);
  EXPECT_EQ(c[1], 1.0);            // ||p|| = 0
  EXPECT_EQ(c[2], o.max_coeff);    // large weights
  EXPECT_EQ(c[3], o.min_coeff);    // tiny weights
}

TEST(Lamb, WithoutBiasCorrectionMatchesReference) {
  LambOptions o = test_options();
  o.bias_correction = false;
  expect_matches_reference(o, "no_bias_correction");
}

TEST(Lamb, EpsInsideSqrtMatchesReference) {
  LambOptions o = test_options();
  o.eps_inside_sqrt = true;
  o.eps = 1e-4;  // large enough to change the result (v is about 1e-4 here)
  expect_matches_reference(o, "eps_inside_sqrt");
}

// The moments and apply kernels of every ISA give the scalar path's bits, whatever the
// thread count, over several chunks with a ragged tail, in both eps modes.
TEST(Lamb, KernelIsasAndThreadCountsGiveIdenticalBits) {
  const int64_t n = 2 * 16384 + 1000 + 13;
  const auto p0 = random_vector(n, 31), g = random_vector(n, 32), m0 = random_vector(n, 33, 0.1f);
  auto v0 = random_vector(n, 34, 0.1f);
  for (float& x : v0) x = x * x;
  for (bool inside : {false, true}) {
    LambArgs a;
    a.grad_scale = 0.7f;
    a.beta1 = 0.85f;
    a.one_minus_beta1 = 0.15f;
    a.beta2 = 0.99f;
    a.one_minus_beta2 = 0.01f;
    a.eps = inside ? 1e-4f : 1e-8f;
    a.eps_inside_sqrt = inside;
    a.decay = 0.01f;
    a.step_size = 3e-3;  // with the trust ratio clamped to 1: a step of -3e-3f
    a.min_coeff = a.max_coeff = 1.0;
    auto run = [&](Isa isa, int threads, std::vector<float>* p, std::vector<float>* m, std::vector<float>* v,
                   LambSums* sums) {
      *p = p0;
      *m = m0;
      *v = v0;
      const int saved = omp_get_max_threads();
      omp_set_num_threads(threads);
      cpu_kernels_for(isa).lamb_moments(p->data(), g.data(), m->data(), v->data(), n, a, sums);
      cpu_kernels_for(isa).lamb_apply(p->data(), m->data(), v->data(), n, a, sums);
      omp_set_num_threads(saved);
    };
    std::vector<float> p_ref, m_ref, v_ref;
    LambSums s_ref;
    run(Isa::kScalar, 1, &p_ref, &m_ref, &v_ref, &s_ref);
    // The scalar path against the formula in double, and its sums.
    double pp = 0, uu = 0;
    for (int64_t i = 0; i < n; ++i) {
      const double gi = static_cast<double>(g[i]) * 0.7;
      const double m = m0[i] * 0.85 + 0.15 * gi, v = v0[i] * 0.99 + 0.01 * gi * gi;
      const double u = m / (inside ? std::sqrt(v + 1e-4) : std::sqrt(v) + 1e-8) + 0.01 * p0[i];
      pp += static_cast<double>(p0[i]) * p0[i];
      uu += u * u;
      ASSERT_NEAR(p_ref[i], p0[i] - 3e-3 * u, 1e-6 * (1 + std::fabs(p0[i]))) << i;
    }
    EXPECT_NEAR(s_ref.param_sq, pp, 1e-12 * pp);
    EXPECT_NEAR(s_ref.update_sq, uu, 1e-5 * uu);
    std::vector<Isa> isas = {Isa::kScalar};
    if (detect_isa() >= Isa::kAvx2) isas.push_back(Isa::kAvx2);
    if (detect_isa() >= Isa::kAvx512) isas.push_back(Isa::kAvx512);
    for (Isa isa : isas) {
      for (int threads : {1, 2, 3}) {
        std::vector<float> p, m, v;
        LambSums s;
        run(isa, threads, &p, &m, &v, &s);
        const std::string what = std::string(isa_name(isa)) + ", " + std::to_string(threads) + " threads";
        EXPECT_EQ(0, std::memcmp(p.data(), p_ref.data(), n * sizeof(float))) << what;
        EXPECT_EQ(0, std::memcmp(m.data(), m_ref.data(), n * sizeof(float))) << what;
        EXPECT_EQ(0, std::memcmp(v.data(), v_ref.data(), n * sizeof(float))) << what;
        EXPECT_EQ(s.param_sq, s_ref.param_sq) << what;
        EXPECT_EQ(s.update_sq, s_ref.update_sq) << what;
      }
    }
  }
}

// OneCycle's momentum replaces beta1 exactly as the configured value would.
TEST(Lamb, CycledMomentumIsBeta1) {
  const ParamTable t = test_table();
  LambOptions o = test_options();
  const Problem pr = make_problem(o);
  o.beta1 = 0.8;
  auto configured = Lamb::create(t, {0, t.numel()}, o).value();
  o.beta1 = 0.9;
  auto cycled = Lamb::create(t, {0, t.numel()}, o).value();
  std::vector<float> p1 = pr.p0, p2 = pr.p0;
  for (int step = 0; step < 2; ++step) {
    StepHyper h;
    h.lr = o.lr;
    configured->step(p1.data(), pr.grads[static_cast<size_t>(step)].data(), h);
    h.momentum = 0.8;
    cycled->step(p2.data(), pr.grads[static_cast<size_t>(step)].data(), h);
  }
  EXPECT_EQ(0, std::memcmp(p1.data(), p2.data(), p1.size() * sizeof(float)));
}

// The trust ratio that lamb_apply forms from the sums in backend memory: 1 when either
// norm is 0, else ||p|| / ||u|| clamped, a NaN ratio kept (std::min(std::max()) order);
// lamb_neg_step rounds -(step_size * ratio) to float once.
TEST(Lamb, TrustRatioFromTheSums) {
  EXPECT_EQ(lamb_trust_ratio(LambSums{0.0, 4.0}, 0.01, 10.0), 1.0);
  EXPECT_EQ(lamb_trust_ratio(LambSums{9.0, 0.0}, 0.01, 10.0), 1.0);
  EXPECT_EQ(lamb_trust_ratio(LambSums{9.0, 4.0}, 0.01, 10.0), 1.5);
  EXPECT_EQ(lamb_trust_ratio(LambSums{400.0, 1.0}, 0.01, 10.0), 10.0);
  EXPECT_EQ(lamb_trust_ratio(LambSums{1e-6, 1.0}, 0.01, 10.0), 0.01);
  EXPECT_TRUE(std::isnan(lamb_trust_ratio(LambSums{NAN, 1.0}, 0.01, 10.0)));
  LambArgs a;
  a.step_size = 1e-3;
  a.min_coeff = 0.01;
  a.max_coeff = 10.0;
  EXPECT_EQ(lamb_neg_step(LambSums{9.0, 4.0}, a), static_cast<float>(-1.5e-3));
}

// Whole tensors may come in separate update() calls (same bits); a range or a call that
// cuts a tensor is refused.
TEST(Lamb, NeedsWholeTensors) {
  const ParamTable t = test_table();
  const LambOptions o = test_options();
  const Problem pr = make_problem(o);
  auto whole = Lamb::create(t, {0, t.numel()}, o).value();
  auto pieces = Lamb::create(t, {0, t.numel()}, o, cpu_backend(), /*own_state=*/false).value();
  std::vector<float> p1 = pr.p0, p2 = pr.p0, m(t.numel()), v(t.numel());
  StepHyper h;
  h.lr = o.lr;
  whole->step(p1.data(), pr.grads[0].data(), h);
  pieces->begin_step(h);
  const size_t cut = t.specs()[2].offset;  // between tensors 1 and 2
  float* s1[2] = {m.data(), v.data()};
  pieces->update(0, cut, p2.data(), pr.grads[0].data(), s1);
  float* s2[2] = {m.data() + cut, v.data() + cut};
  pieces->update(cut, t.numel() - cut, p2.data() + cut, pr.grads[0].data() + cut, s2);
  EXPECT_EQ(0, std::memcmp(p1.data(), p2.data(), p1.size() * sizeof(float)));
  EXPECT_EQ(0, std::memcmp(whole->state()[0].data, m.data(), m.size() * sizeof(float)));

  auto shard = Lamb::create(t, {10, t.numel()}, o);
  ASSERT_FALSE(shard.ok());
  EXPECT_EQ(shard.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(shard.status().message().find("h.attn.w"), std::string::npos) << shard.status().message();
  auto aligned = Lamb::create(t, {t.specs()[1].offset, t.specs()[3].offset}, o);
  EXPECT_TRUE(aligned.ok());

  pieces->begin_step(h);  // the check fires before any kernel runs in the forked child
  EXPECT_DEATH(pieces->update(cut, 5, p2.data() + cut, pr.grads[0].data() + cut, s2), "cut tensor wpe");
}

}  // namespace
}  // namespace zt
