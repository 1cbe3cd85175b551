// The planner's communication model: every collective as α + n·β on the link its group
// crosses, with the step counts of the algorithms zerotrain runs (comm/ring.h) for a group
// of P ranks moving n bytes (the whole buffer):
//   all_reduce:                 2(P-1) α + 2(P-1)/P · n · β   (reduce-scatter then all-gather)
//   reduce_scatter, all_gather:  (P-1) α +  (P-1)/P · n · β
//   p2p (send/recv):                   α +            n · β
// α and β are fitted per collective (with the coefficients above for the ranks the
// calibration ran): β from the large messages, α from the small ones (fit_collective), so
// each collective's own overheads stay in its own figures. Where the measured points are
// kept, a collective is priced as its ring steps x one step's time, interpolated between the
// measured points at the step's size (n / P bytes; n for p2p): real links are not one
// straight line (a TCP link under a token bucket moves 4 MiB messages at twice its 64 MiB
// rate). Beyond the largest point the last segment extends; below the smallest, its time.
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace zt {

enum class Collective { kAllReduce, kReduceScatter, kAllGather, kP2p };
constexpr int kNumCollectives = 4;
const char* collective_name(Collective c);  // "all_reduce", "reduce_scatter", "all_gather", "p2p"
bool parse_collective(const std::string& name, Collective* out);

struct CollectiveFit {
  double alpha_s = 0.0;          // per message step
  double beta_s_per_byte = 0.0;  // per byte a rank sends in a step
  int ranks = 0;                 // the group size the points were measured with
  double max_rel_residual = 0.0;  // worst |fit - measured| / measured over the points
  std::vector<std::pair<double, double>> points;  // the measured (bytes, seconds); priced from when kept
  // (bytes, seconds) measured apart from `points` (half-way between them, geometrically):
  // how well the priced curve fits the link (validation_error); empty: not checked.
  std::vector<std::pair<double, double>> validation_points;
};

// How much a step's predicted time may move by its communication fits' own error before the
// planner refuses to predict it: the comm part's worst relative error at the sizes it priced
// (fit_rel_error_at) times its share of the step. 0.10 is the planner's median-error bar
// (bench/planner.sh), leaving the rest of its 0.20 worst bar to the kernels' timings.
constexpr double kMaxCommStepError = 0.10;

// The multipliers of α and of n·β for P ranks.
std::pair<double, double> collective_coefficients(Collective c, int ranks);
// Predicted seconds for `bytes` over a group of `ranks` (0 for a group of one): from the
// measured points when the fit kept them, else α and β.
double collective_seconds(const CollectiveFit& fit, Collective c, double bytes, int ranks);
// β by least squares over the points of at least 1/16 of the largest size, α as the mean
// intercept of the two smallest; both clamped at 0.
CollectiveFit fit_collective(Collective c, int ranks, const std::vector<std::pair<double, double>>& points);
// Keeps `checks`, (bytes, seconds) measured at sizes that are not among its points, as the
// fit's validation points.
void validate_fit(CollectiveFit* fit, const std::vector<std::pair<double, double>>& checks);
// The priced curve's worst |predicted - measured| / measured over the validation points, or
// -1 when there are none.
double validation_error(const CollectiveFit& fit, Collective c);
// The fit's relative error at the validation point nearest `bytes` over `ranks` (in a ring
// step's bytes, log scale), or -1 when the fit was not validated (an older calibration).
double fit_rel_error_at(const CollectiveFit& fit, Collective c, double bytes, int ranks);

}  // namespace zt
