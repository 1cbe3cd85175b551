// Communication cost model; see comm_model.h.
#include "planner/comm_model.h"

#include <algorithm>
#include <cmath>

namespace zt {

namespace {
constexpr const char* kNames[kNumCollectives] = {"all_reduce", "reduce_scatter", "all_gather", "p2p"};
}  // namespace

const char* collective_name(Collective c) { return kNames[static_cast<int>(c)]; }

bool parse_collective(const std::string& name, Collective* out) {
  for (int i = 0; i < kNumCollectives; ++i) {
    if (name == kNames[i]) {
      *out = static_cast<Collective>(i);
      return true;
    }
  }
  return false;
}

std::pair<double, double> collective_coefficients(Collective c, int ranks) {
  const double P = ranks, steps = P - 1.0;
  switch (c) {
    case Collective::kAllReduce:
      return {2.0 * steps, 2.0 * steps / P};
    case Collective::kReduceScatter:
    case Collective::kAllGather:
      return {steps, steps / P};
    default:
      return {1.0, 1.0};
  }
}

double collective_seconds(const CollectiveFit& fit, Collective c, double bytes, int ranks) {
  if (ranks <= 1 && c != Collective::kP2p) return 0.0;
  const auto [ka, kb] = collective_coefficients(c, ranks);
  return ka * fit.alpha_s + kb * bytes * fit.beta_s_per_byte;
}

CollectiveFit fit_collective(Collective c, int ranks, const std::vector<std::pair<double, double>>& points) {
  CollectiveFit fit;
  fit.ranks = ranks;
  fit.points = points;
  if (points.empty()) return fit;
  const auto [ka, kb] = collective_coefficients(c, ranks);
  // t = ka α + kb n β, weighted by 1/t so small and large messages count alike.
  double s11 = 0, s12 = 0, s22 = 0, r1 = 0, r2 = 0;
  for (const auto& [n, t] : points) {
    const double w = 1.0 / (t * t), x1 = ka, x2 = kb * n;
    s11 += w * x1 * x1;
    s12 += w * x1 * x2;
    s22 += w * x2 * x2;
    r1 += w * x1 * t;
    r2 += w * x2 * t;
  }
  const double det = s11 * s22 - s12 * s12;
  if (std::fabs(det) > 0) {
    fit.alpha_s = (r1 * s22 - r2 * s12) / det;
    fit.beta_s_per_byte = (s11 * r2 - s12 * r1) / det;
  }
  if (fit.alpha_s < 0) {  // refit β alone
    fit.alpha_s = 0;
    fit.beta_s_per_byte = s22 > 0 ? r2 / s22 : 0;
  }
  if (fit.beta_s_per_byte < 0) {  // refit α alone
    fit.beta_s_per_byte = 0;
    fit.alpha_s = s11 > 0 ? r1 / s11 : 0;
  }
  for (const auto& [n, t] : points) {
    const double e = std::fabs(collective_seconds(fit, c, n, ranks) - t) / t;
    fit.max_rel_residual = std::max(fit.max_rel_residual, e);
  }
  return fit;
}

}  // namespace zt
