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

namespace {

// Ring steps of a collective over P ranks, and the bytes each step carries for n bytes.
double steps(Collective c, int P) {
  const double k = P - 1.0;
  return c == Collective::kAllReduce ? 2.0 * k : c == Collective::kP2p ? 1.0 : k;
}
double step_bytes(Collective c, double n, int P) { return c == Collective::kP2p ? n : n / P; }

// One ring step's seconds for `s` bytes, interpolated linearly between the measured points
// (each as per-step bytes and seconds of the calibration's rank count), extended with the
// last segment's slope beyond the largest, and the smallest point's time below it. False
// when fewer than two points were kept.
bool step_seconds(const CollectiveFit& fit, Collective c, double s, double* out) {
  if (fit.points.size() < 2 || fit.ranks < 2) return false;
  std::vector<std::pair<double, double>> p;
  for (const auto& [n, t] : fit.points) p.emplace_back(step_bytes(c, n, fit.ranks), t / steps(c, fit.ranks));
  std::sort(p.begin(), p.end());
  if (s <= p.front().first) {
    *out = p.front().second;
    return true;
  }
  size_t i = 0;
  while (i + 2 < p.size() && p[i + 1].first < s) ++i;
  const double dn = p[i + 1].first - p[i].first;
  const double slope = dn > 0 ? (p[i + 1].second - p[i].second) / dn : 0.0;
  *out = std::max(p[i].second, p[i].second + slope * (s - p[i].first));
  return true;
}

}  // namespace

double collective_seconds(const CollectiveFit& fit, Collective c, double bytes, int ranks) {
  if (ranks <= 1 && c != Collective::kP2p) return 0.0;
  const int P = c == Collective::kP2p ? 2 : ranks;
  double t = 0.0;
  if (step_seconds(fit, c, step_bytes(c, bytes, P), &t)) return steps(c, P) * t;
  const auto [ka, kb] = collective_coefficients(c, ranks);
  return ka * fit.alpha_s + kb * bytes * fit.beta_s_per_byte;
}

// β from the large messages, where bandwidth dominates (least squares through the points
// of at least 1/16 of the largest size: a link that bursts small messages, as a token
// bucket or a switch buffer does, must not make bulk transfers look fast); α from the
// small ones (the mean intercept of the two smallest sizes), both clamped at 0.
CollectiveFit fit_collective(Collective c, int ranks, const std::vector<std::pair<double, double>>& points) {
  CollectiveFit fit;
  fit.ranks = ranks;
  fit.points = points;
  if (points.empty()) return fit;
  std::vector<std::pair<double, double>> p = points;
  std::sort(p.begin(), p.end());
  const auto [ka, kb] = collective_coefficients(c, ranks);
  const double big = p.back().first / 16.0;
  double sx = 0, sy = 0, sxx = 0, sxy = 0, k = 0;
  for (const auto& [n, t] : p) {
    if (n < big) continue;
    const double x = kb * n;
    sx += x;
    sy += t;
    sxx += x * x;
    sxy += x * t;
    ++k;
  }
  const double det = k * sxx - sx * sx;
  fit.beta_s_per_byte = std::max(0.0, det > 0 ? (k * sxy - sx * sy) / det : sxx > 0 ? sxy / sxx : 0.0);
  const size_t small = std::min<size_t>(2, p.size());
  double a = 0;
  for (size_t i = 0; i < small; ++i) a += (p[i].second - kb * p[i].first * fit.beta_s_per_byte) / ka;
  fit.alpha_s = std::max(0.0, a / static_cast<double>(small));
  CollectiveFit line = fit;  // the residual of the α + n·β line itself
  line.points.clear();
  for (const auto& [n, t] : points) {
    const double e = std::fabs(collective_seconds(line, c, n, ranks) - t) / t;
    fit.max_rel_residual = std::max(fit.max_rel_residual, e);
  }
  return fit;
}

namespace {

// The priced curve's relative error at one point measured with the fit's own ranks.
double point_error(const CollectiveFit& fit, Collective c, double bytes, double seconds) {
  return std::fabs(collective_seconds(fit, c, bytes, fit.ranks) - seconds) / seconds;
}

}  // namespace

double fit_rel_error_at(const CollectiveFit& fit, Collective c, double bytes, int ranks) {
  if (fit.validation_points.empty() || fit.ranks < 2) return -1.0;
  const int P = c == Collective::kP2p ? 2 : std::max(2, ranks);
  const double want = std::log(std::max(1.0, step_bytes(c, bytes, P)));
  double best_d = 0.0, err = -1.0;
  for (const auto& [n, t] : fit.validation_points) {
    const double d = std::fabs(std::log(std::max(1.0, step_bytes(c, n, fit.ranks))) - want);
    if (err >= 0.0 && d >= best_d) continue;
    best_d = d;
    err = point_error(fit, c, n, t);
  }
  return err;
}

void validate_fit(CollectiveFit* fit, const std::vector<std::pair<double, double>>& checks) {
  fit->validation_points = checks;
}

double validation_error(const CollectiveFit& fit, Collective c) {
  double worst = -1.0;
  for (const auto& [n, t] : fit.validation_points) worst = std::max(worst, point_error(fit, c, n, t));
  return worst;
}

}  // namespace zt
