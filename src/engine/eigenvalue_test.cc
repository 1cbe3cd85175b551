// DeepSpeed's power iteration and post-processing (eigenvalue.h) against
// tests/efficiency/eigenvalue_oracle.py, which restates runtime/eigenvalue.py on explicit
// matrices in float64: the same start vector gives the same Rayleigh quotient after every
// iteration (to 1e-12 relative: both are double, only the summation order differs), the same
// iteration count, and post_process's [0, 1] values with 1.0 for an exact zero.
#include "engine/eigenvalue.h"

#include <gtest/gtest.h>

#include <cmath>

#include "core/rng.h"
#include "testing/efficiency_oracle.h"

namespace zt {
namespace {

struct Case {
  std::vector<std::vector<double>> h;
  std::vector<double> v0;
};

Case random_symmetric(int n, uint64_t seed, double shift) {
  Rng rng(seed);
  Case c{std::vector<std::vector<double>>(n, std::vector<double>(n)), {}};
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j <= i; ++j) c.h[i][j] = c.h[j][i] = rng.normal() + (i == j ? shift * i : 0.0);
  }
  for (int i = 0; i < n; ++i) c.v0.push_back(rng.normal());
  return c;
}

HessianVectorProduct matvec(const Case& c) {
  return [&c](const std::vector<double>& v, std::vector<double>* hv) {
    hv->assign(v.size(), 0.0);
    for (size_t i = 0; i < v.size(); ++i) {
      for (size_t j = 0; j < v.size(); ++j) (*hv)[i] += c.h[i][j] * v[j];
    }
    return Status::OK();
  };
}

TEST(Eigenvalue, PowerIterationFollowsDeepSpeedIterationByIteration) {
  const Case cases[] = {random_symmetric(12, 5, 0.6), random_symmetric(9, 8, -0.9), random_symmetric(16, 13, 0.0)};
  for (const double tol : {1e-2, 1e-4}) {
    Json blocks = Json::array();
    for (const Case& c : cases) blocks.push_back({{"matrix", c.h}, {"v0", c.v0}});
    const Json cfg = {{"blocks", blocks}, {"max_iter", 60}, {"tol", tol}, {"stability", 1e-6}, {"dtype", "float64"}};
    const Json ref = testing::efficiency_oracle("eigenvalue_oracle.py", cfg.dump());
    ASSERT_TRUE(ref.contains("blocks"));
    std::vector<double> values;
    for (size_t b = 0; b < std::size(cases); ++b) {
      EigenvalueOptions o;
      o.max_iter = 60;
      o.tol = tol;
      auto e = power_iteration(matvec(cases[b]), cases[b].v0, o);
      ASSERT_TRUE(e.ok());
      const Json& r = ref["blocks"][b];
      ASSERT_EQ(e->iterations, r["iterations"].get<int>()) << "block " << b << " tol " << tol;
      for (int i = 0; i < e->iterations; ++i) {
        const double want = r["trace"][i].get<double>();
        EXPECT_NEAR(e->trace[i], want, 1e-12 * std::fabs(want)) << "block " << b << " iteration " << i;
      }
      EXPECT_EQ(e->value, e->trace.back());
      values.push_back(e->value);
    }
    const std::vector<double> post = post_process_eigenvalues(values);
    for (size_t b = 0; b < post.size(); ++b) EXPECT_NEAR(post[b], ref["post_processed"][b].get<double>(), 1e-12);
  }
}

TEST(Eigenvalue, PostProcessAndDegenerateProducts) {
  EXPECT_EQ(post_process_eigenvalues({-3.0, 1.5, 0.0}), (std::vector<double>{1.0, 0.5, 1.0}));
  EXPECT_EQ(post_process_eigenvalues({0.0, 0.0}), (std::vector<double>{1.0, 1.0}));
  // A product that overflows is nan_to_num'd to zero: the quotient is 0 and the loop stops.
  const HessianVectorProduct inf = [](const std::vector<double>& v, std::vector<double>* hv) {
    hv->assign(v.size(), INFINITY);
    return Status::OK();
  };
  auto e = power_iteration(inf, {1.0, 2.0}, EigenvalueOptions{});
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->iterations, 1);
  EXPECT_EQ(e->value, 0.0);
  // The start vector depends on the step and block only, never on the rank.
  EXPECT_EQ(eigenvalue_start_vector(5, 7, 3, 1), eigenvalue_start_vector(5, 7, 3, 1));
  EXPECT_NE(eigenvalue_start_vector(5, 7, 3, 1), eigenvalue_start_vector(5, 7, 3, 0));
}

}  // namespace
}  // namespace zt
