// Global-norm gradient clipping, DeepSpeed/torch style: the coefficient
// max_norm / (norm + 1e-6) multiplies every gradient when it is below 1.
#pragma once

#include <cstddef>

#include "backend/backend.h"

namespace zt {

// Host helpers over the kernel, for host-memory backends (their accumulator is a host
// double; the Trainer sums into backend memory instead, engine/trainer.h add_squares).
// Sum of squares of n floats (fixed-order, thread-count independent).
double sum_of_squares(const float* x, size_t n, const KernelOps& k = cpu_backend().ops());

// 1.0 when max_norm <= 0 (clipping off) or the norm is already within it.
double clip_coefficient(double global_norm, double max_norm);

}  // namespace zt
