// DeepSpeed's eigenvalue estimate (runtime/eigenvalue.py; deepspeed-efficiency-rules.md 4),
// the arithmetic without the model: the power iteration on one block's Hessian, given a
// Hessian-vector product, and the post-processing into [0, 1].
//   v = normalize(v0);  i = 0; cur = 1; prev = 0
//   while i < max_iter and |cur| > 0 and |(cur - prev) / cur| >= tol:
//       prev = cur; Hv = nan_to_num(H v); cur = <Hv, v>; v = normalize(Hv); i += 1
//   normalize(x) = nan_to_num(x / (||x|| + stability)); nan_to_num maps NaN and +-inf to 0.
// zerotrain's products are of the unscaled loss (fp16's loss scale never enters), which is
// DeepSpeed's loop at scale 1. The estimate is the eigenvalue of largest magnitude, signed.
// Vectors are double: the products' own error (engine/hessian_probe.h) dominates.
// Thread-safety: pure functions; the product may be collective, so every rank calls in step.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "core/status.h"
#include "data/efficiency_options.h"

namespace zt {

// Fills *hv (resized to v.size()) with H v for the block being estimated.
using HessianVectorProduct = std::function<Status(const std::vector<double>& v, std::vector<double>* hv)>;

struct BlockEigenvalue {
  double value = 0.0;   // the last Rayleigh quotient <Hv, v>
  int iterations = 0;
  std::vector<double> trace;  // the quotient after each iteration
};

StatusOr<BlockEigenvalue> power_iteration(const HessianVectorProduct& hvp, std::vector<double> v0,
                                          const EigenvalueOptions& options);

// DeepSpeed's post_process: |e| / max |e|, and 1.0 for an eigenvalue of exactly 0.
std::vector<double> post_process_eigenvalues(const std::vector<double>& values);

// The start vector of block `block` at step `step`: standard normals from the run's seed,
// the same on every rank and layout (DeepSpeed draws torch.randn without advancing the
// global stream; here the draw has its own counter-based stream).
std::vector<double> eigenvalue_start_vector(size_t n, uint64_t seed, int64_t step, int block);

}  // namespace zt
