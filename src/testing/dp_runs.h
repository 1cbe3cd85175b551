// The multi-rank training runs the data-parallel exactness tests share: zt_dp_train
// (tests/drivers/dp_train.cc) for kSteps steps under a launcher (mpirun's prefix, or
// nothing for the single process), its losses, gradient norms and final parameters, and
// the comparison against the single process on the same global batch with the bounds
// argued in tests/dp/dp_exactness_test.cc (losses and norms within 1e-5 relative,
// parameters within 1e-6 + steps * 2^-23 * |p| after SGD with momentum).
// Header-only, tests only.
#pragma once

#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "testing/launch.h"

namespace zt::testing {

constexpr int kSteps = 20;

struct RunResult {
  std::vector<double> losses;
  std::vector<double> norms;
  std::vector<float> params;
  std::string log;
};

inline RunResult run_dp_train(const std::string& launcher, const std::string& args, const std::string& tag) {
  // The process id keeps the files of tests running side by side (ctest -j) apart.
  const std::string dir = ::testing::TempDir() + "zt_dp_" + std::to_string(::getpid()) + "_";
  const std::string out = dir + tag + ".bin", log = dir + tag + ".log";
  const std::string cmd = launcher + binary_dir() + std::string("/zt_dp_train --steps ") + std::to_string(kSteps) +
                          " --out " + out + " " + args;
  RunResult r;
  const int rc = run_logged(cmd, log, &r.log);
  EXPECT_EQ(rc, 0) << cmd << "\n" << r.log;
  r.losses = step_losses(r.log);
  r.norms = step_values(r.log, "norm");
  r.params = read_floats(out);
  return r;
}

enum class Compare { kLossesOnly, kLossesAndParams };

inline double rel(double got, double ref) { return std::fabs(got - ref) / std::max(std::fabs(ref), 1e-30); }

inline void expect_same(const RunResult& ref, const RunResult& got, const std::string& what, Compare cmp) {
  ASSERT_EQ(got.losses.size(), static_cast<size_t>(kSteps)) << what << "\n" << got.log;
  ASSERT_EQ(got.norms.size(), static_cast<size_t>(kSteps)) << what << "\n" << got.log;
  ASSERT_EQ(got.params.size(), ref.params.size()) << what;
  double worst_loss = 0.0, worst_norm = 0.0, worst_param = 0.0, worst_excess = -1.0;
  for (int s = 0; s < kSteps; ++s) {
    worst_loss = std::max(worst_loss, rel(got.losses[s], ref.losses[s]));
    worst_norm = std::max(worst_norm, rel(got.norms[s], ref.norms[s]));
  }
  for (size_t i = 0; cmp == Compare::kLossesAndParams && i < ref.params.size(); ++i) {
    const double d = std::fabs(static_cast<double>(got.params[i]) - ref.params[i]);
    const double bound = 1e-6 + kSteps * std::ldexp(1.0, -23) * std::fabs(ref.params[i]);
    worst_param = std::max(worst_param, d);
    worst_excess = std::max(worst_excess, d - bound);
  }
  EXPECT_LE(worst_loss, 1e-5) << what;
  EXPECT_LE(worst_norm, 1e-5) << what;
  EXPECT_LE(worst_excess, 0.0) << what << ": a parameter differs by more than 1e-6 + steps * 2^-23 * |p|";
  std::printf("  %-40s max loss rel diff %.2e, grad norm %.2e, max param diff %.2e\n", what.c_str(), worst_loss,
              worst_norm, worst_param);
}

}  // namespace zt::testing
