// Page-locked host memory for the CUDA backend's staging (Backend::staging_host): a host
// backend with the CPU's kernels whose arenas come from cudaHostAlloc, so the copies that
// cross them run at the bus's full speed (55 GB/s each way on the H200 machine, against a
// fraction of that from pageable memory) and can overlap compute. Failure to pin is named
// with the bytes and the way out; it is never replaced silently by pageable memory.
// Thread-safety: immutable after construction, as every backend.
#pragma once

#include "backend/backend.h"

namespace zt {

// The pinned host backend for a compute dtype (one per dtype, process-wide).
// REQUIRES: the CUDA context exists (cuda_backend() made it).
const Backend& cuda_pinned_host(DType compute);

}  // namespace zt
