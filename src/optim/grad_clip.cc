// Norms via the backend's sum-of-squares kernel.
#include "optim/grad_clip.h"

#include <cstdint>


namespace zt {

double sum_of_squares(const float* x, size_t n, const KernelOps& k) {
  double acc = 0.0;  // a host double: host-memory backends only
  k.sum_squares(&acc, x, static_cast<int64_t>(n));
  return acc;
}

double clip_coefficient(double global_norm, double max_norm) {
  if (max_norm <= 0.0) return 1.0;
  const double coef = max_norm / (global_norm + 1e-6);
  return coef < 1.0 ? coef : 1.0;
}

}  // namespace zt
