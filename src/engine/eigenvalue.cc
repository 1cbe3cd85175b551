// DeepSpeed's power iteration and post-processing; see eigenvalue.h.
#include "engine/eigenvalue.h"

#include <algorithm>
#include <cmath>

#include "core/rng.h"

namespace zt {

namespace {

double nan_to_num(double x) { return std::isfinite(x) ? x : 0.0; }

double dot(const std::vector<double>& a, const std::vector<double>& b) {
  double s = 0.0;
  for (size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

void normalize(std::vector<double>* x, double stability) {
  const double norm = std::sqrt(dot(*x, *x)) + stability;
  for (double& e : *x) e = nan_to_num(e / norm);
}

}  // namespace

StatusOr<BlockEigenvalue> power_iteration(const HessianVectorProduct& hvp, std::vector<double> v,
                                          const EigenvalueOptions& o) {
  normalize(&v, o.stability);
  BlockEigenvalue out;
  double cur = 1.0, prev = 0.0;
  std::vector<double> hv;
  while (out.iterations < o.max_iter && std::fabs(cur) > 0.0 && std::fabs((cur - prev) / cur) >= o.tol) {
    prev = cur;
    ZT_RETURN_IF_ERROR(hvp(v, &hv));
    for (double& e : hv) e = nan_to_num(e);
    cur = dot(hv, v);
    v = hv;
    normalize(&v, o.stability);
    ++out.iterations;
    out.trace.push_back(cur);
  }
  out.value = cur;
  return out;
}

std::vector<double> post_process_eigenvalues(const std::vector<double>& values) {
  double m = 0.0;
  for (double v : values) m = std::max(m, std::fabs(v));
  std::vector<double> out;
  for (double v : values) out.push_back(v == 0.0 ? 1.0 : std::fabs(v) / m);
  return out;
}

std::vector<double> eigenvalue_start_vector(size_t n, uint64_t seed, int64_t step, int block) {
  Rng rng(seed ^ (0x9e3779b97f4a7c15ull * static_cast<uint64_t>(step + 1)) ^ (0xbf58476d1ce4e5b9ull * static_cast<uint64_t>(block + 1)));
  std::vector<double> v(n);
  for (double& e : v) e = rng.normal();
  return v;
}

}  // namespace zt
