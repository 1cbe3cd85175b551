// Device-side random fills for measurements and tests: element i of a seed is a fixed
// hash of (seed, i) mapped to [-scale, scale), so the values never depend on the launch
// and never are zeros (which can time faster than real data). Stored as `t`.
// Thread-safety: as elementwise.h.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "tensor/dtype.h"

namespace zt::cuda {

void fill_uniform(DType t, void* dst, int64_t n, uint64_t seed, float scale, cudaStream_t stream);

// The same value on the host: what fill_uniform(kF32, ...) writes at element i.
float uniform_value(uint64_t seed, int64_t i, float scale);

}  // namespace zt::cuda
