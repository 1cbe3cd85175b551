// The compressed all-reduce and the 1-bit optimizers over thread ranks:
//  - one call equals a plain double-precision reference of DeepSpeed's algorithm;
//  - every rank ends with the same bits, and a segment's chunk holds only +-its scale;
//  - error feedback: averaging the outputs of repeated calls on fixed inputs converges
//    to the true average, though one call is far from it;
//  - 1-bit Adam's warm-up is Adam without bias correction, and after the freeze the
//    replicas stay identical; 0/1 Adam's replicas agree after each synchronisation.
#include "parallel/data/onebit_compressor.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "comm/thread_world.h"
#include "parallel/data/onebit_adam.h"
#include "parallel/data/onebit_lamb.h"

namespace zt {
namespace {

std::vector<float> random_vector(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng) + 0.3f;
  return v;
}

// DeepSpeed's compressed all-reduce for one call from zero error, in double, written
// directly from mpi.py's compressed_allreduce (pad, worker sign+scale, server average,
// server sign+scale).
std::vector<double> reference(const std::vector<std::vector<float>>& x, const std::vector<size_t>& segments) {
  const size_t P = x.size();
  std::vector<double> out;
  size_t off = 0;
  for (size_t n : segments) {
    const size_t pad = (n + 32 * P - 1) / (32 * P) * (32 * P), chunk = pad / P;
    std::vector<std::vector<double>> sgn(P, std::vector<double>(pad));
    std::vector<double> scale(P);
    for (size_t r = 0; r < P; ++r) {
      double sq = 0.0;
      for (size_t e = 0; e < pad; ++e) {
        const double b = e < n ? x[r][off + e] : 0.0;
        sq += b * b;
        sgn[r][e] = b >= 0.0 ? 1.0 : -1.0;
      }
      scale[r] = std::sqrt(sq / static_cast<double>(pad));
    }
    std::vector<double> result(pad);
    for (size_t j = 0; j < P; ++j) {
      std::vector<double> m(chunk);
      double sq = 0.0;
      for (size_t e = 0; e < chunk; ++e) {
        for (size_t r = 0; r < P; ++r) m[e] += scale[r] * sgn[r][j * chunk + e] / static_cast<double>(P);
        sq += m[e] * m[e];
      }
      const double s = std::sqrt(sq / static_cast<double>(chunk));
      for (size_t e = 0; e < chunk; ++e) result[j * chunk + e] = m[e] >= 0.0 ? s : -s;
    }
    out.insert(out.end(), result.begin(), result.begin() + static_cast<long>(n));
    off += n;
  }
  return out;
}

TEST(OneBitCompressor, OneCallMatchesReferenceAndAllRanksAgree) {
  const int P = 4;
  const std::vector<size_t> segments = {5, 300, 37};
  std::vector<std::vector<float>> in(P), out(P);
  for (int r = 0; r < P; ++r) in[r] = out[r] = random_vector(342, 17u + static_cast<uint32_t>(r));
  ThreadWorld world(P, CommOptions{});
  ASSERT_TRUE(run_ranks(P, [&](int r) {
                auto g = world.group(r);
                OneBitCompressor c(g.get(), segments);
                return c.all_reduce(out[static_cast<size_t>(r)].data());
              }).ok());
  const std::vector<double> want = reference(in, segments);
  for (int r = 0; r < P; ++r) {
    EXPECT_EQ(std::memcmp(out[r].data(), out[0].data(), out[0].size() * sizeof(float)), 0) << "rank " << r;
  }
  // Float sums of at most 4 terms and one square root per scale: a few ulp.
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(out[0][i], want[i], 1e-5 * std::fabs(want[i])) << i;
}

TEST(OneBitCompressor, ErrorFeedbackConvergesToTheAverage) {
  const int P = 3, calls = 400;
  const size_t n = 500;
  std::vector<std::vector<float>> in(P);
  for (int r = 0; r < P; ++r) in[r] = random_vector(n, 99u + static_cast<uint32_t>(r));
  std::vector<double> avg(n, 0.0);
  for (int r = 0; r < P; ++r) {
    for (size_t i = 0; i < n; ++i) avg[i] += in[r][i] / P;
  }
  std::vector<std::vector<double>> mean(P, std::vector<double>(n, 0.0));
  std::vector<std::vector<float>> first(P);
  ThreadWorld world(P, CommOptions{});
  ASSERT_TRUE(run_ranks(P, [&](int r) {
                auto g = world.group(r);
                OneBitCompressor c(g.get(), {n});
                for (int k = 0; k < calls; ++k) {
                  std::vector<float> x = in[static_cast<size_t>(r)];
                  ZT_RETURN_IF_ERROR(c.all_reduce(x.data()));
                  if (k == 0) first[static_cast<size_t>(r)] = x;
                  for (size_t i = 0; i < n; ++i) mean[static_cast<size_t>(r)][i] += x[i] / calls;
                }
                return Status::OK();
              }).ok());
  double err_one = 0.0, err_mean = 0.0, norm = 0.0;
  for (size_t i = 0; i < n; ++i) {
    err_one += (first[0][i] - avg[i]) * (first[0][i] - avg[i]);
    err_mean += (mean[0][i] - avg[i]) * (mean[0][i] - avg[i]);
    norm += avg[i] * avg[i];
  }
  // One call keeps only signs (relative error near 1); the feedback carries what was
  // lost into the next calls, so the running mean's error falls like 1/calls.
  EXPECT_GT(std::sqrt(err_one / norm), 0.3);
  EXPECT_LT(std::sqrt(err_mean / norm), 0.02);
}

ParamTable small_table() {
  ParamTable t;
  TensorSpec a, b;
  a.name = "w";
  a.shape = {8, 16};
  a.weight_decay = true;
  b.name = "b";
  b.shape = {40};
  t.add(a);
  t.add(b);
  return t;
}

TEST(OneBitAdam, WarmupIsAdamWithoutBiasCorrectionThenReplicasStayEqual) {
  const int P = 2, steps = 8;
  const ParamTable table = small_table();
  const ElementRange all{0, table.numel()};
  OneBitOptions o;
  o.base.lr = 1e-2;
  o.base.weight_decay = 0.1;
  o.freeze_step = 3;
  std::vector<std::vector<float>> p(P, random_vector(all.size(), 5));
  ThreadWorld world(P, CommOptions{});
  ASSERT_TRUE(run_ranks(P, [&](int r) {
                auto g = world.group(r);
                OneBitAdam opt(table, all, o, g.get(), /*zero_one=*/false);
                std::vector<float> m(all.size()), v(all.size());
                float* states[2] = {m.data(), v.data()};
                std::vector<float> ref = p[static_cast<size_t>(r)], rm(all.size()), rv(all.size());
                for (int t = 1; t <= steps; ++t) {
                  const bool reduced = opt.engine_reduces_gradients();
                  EXPECT_EQ(reduced, t <= o.freeze_step);
                  // The engine's gradient: the same on every rank while reduced, else each rank's own.
                  std::vector<float> grad = random_vector(all.size(), 1000u * t + (reduced ? 0u : r + 1u));
                  opt.begin_step(StepHyper{o.base.lr, NAN, 1.0});
                  opt.update(0, all.size(), p[static_cast<size_t>(r)].data(), grad.data(), states);
                  ZT_RETURN_IF_ERROR(opt.last_error());
                  if (t > o.freeze_step) continue;
                  for (size_t i = 0; i < all.size(); ++i) {  // torch-style Adam, no bias correction, L2 in the update
                    rm[i] = 0.9f * rm[i] + 0.1f * grad[i];
                    rv[i] = 0.999f * rv[i] + 0.001f * grad[i] * grad[i];
                    const float decay = i < 128 ? 0.1f : 0.0f;
                    ref[i] -= 1e-2f * (rm[i] / (std::sqrt(rv[i]) + 1e-8f) + decay * ref[i]);
                  }
                  // Same formula; (1 - beta) rounded differently and FMA contraction move a few ulp per step.
                  for (size_t i = 0; i < all.size(); ++i) {
                    EXPECT_NEAR(p[static_cast<size_t>(r)][i], ref[i], 1e-6 * (1.0 + std::fabs(ref[i]))) << t << " " << i;
                  }
                }
                return Status::OK();
              }).ok());
  EXPECT_EQ(std::memcmp(p[0].data(), p[1].data(), p[0].size() * sizeof(float)), 0);
}

TEST(OneBitOptimizers, ReplicasAgreeAfterEverySynchronisation) {
  const int P = 2;
  const ParamTable table = small_table();
  const ElementRange all{0, table.numel()};
  OneBitOptions o;
  o.base.lr = 1e-2;
  o.freeze_step = 2;
  o.var_freeze_step = 4;
  o.local_step_scaler = 2;
  o.local_step_clipper = 4;
  for (int kind = 0; kind < 2; ++kind) {  // 0/1 Adam, 1-bit LAMB
    std::vector<std::vector<float>> p(P, random_vector(all.size(), 7));
    std::vector<int> agree_steps;
    ThreadWorld world(P, CommOptions{});
    ASSERT_TRUE(run_ranks(P, [&](int r) {
                  auto g = world.group(r);
                  std::unique_ptr<Optimizer> opt;
                  if (kind == 0) opt.reset(new OneBitAdam(table, all, o, g.get(), true));
                  else opt.reset(new OneBitLamb(table, all, o, g.get()));
                  std::vector<std::vector<float>> st(3, std::vector<float>(all.size()));
                  float* states[3] = {st[0].data(), st[1].data(), st[2].data()};
                  for (int t = 1; t <= 20; ++t) {
                    const bool reduced = opt->engine_reduces_gradients();
                    std::vector<float> grad = random_vector(all.size(), 77u * t + (reduced ? 0u : r + 1u));
                    opt->begin_step(StepHyper{o.base.lr, NAN, 1.0});
                    opt->update(0, all.size(), p[static_cast<size_t>(r)].data(), grad.data(), states);
                    ZT_RETURN_IF_ERROR(opt->last_error());
                    ZT_RETURN_IF_ERROR(g->barrier()->wait());
                    if (r == 0 && std::memcmp(p[0].data(), p[1].data(), p[0].size() * sizeof(float)) == 0) {
                      agree_steps.push_back(t);
                    }
                    ZT_RETURN_IF_ERROR(g->barrier()->wait());
                  }
                  return Status::OK();
                }).ok());
    if (kind == 1) {  // 1-bit LAMB communicates every step
      EXPECT_EQ(agree_steps.size(), 20u);
    } else {  // 0/1 Adam: local steps after step 5 diverge, synchronisations re-join (interval 1, 2, 4)
      EXPECT_EQ(agree_steps.front(), 1);
      EXPECT_EQ(agree_steps.back(), 20);
      EXPECT_LT(agree_steps.size(), 20u);
    }
  }
}

}  // namespace
}  // namespace zt
