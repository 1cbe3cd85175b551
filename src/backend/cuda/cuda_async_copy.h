// The CUDA backend's started crossings (Backend::start_copy_to_host/_from_host): one copy
// stream per direction, so a device-to-host copy, a host-to-device copy and the compute
// stream's kernels can all run at once (offload's three-stage pipeline). Each copy waits
// for the compute stream's kernels queued before it (an event); the compute stream waits
// for each host-to-device copy before its later work (joined at its next use,
// CudaContext::join_later), so a copy to host started after one from host need not
// wait for it; a prefetch is joined only at its handle's join(), so the kernels queued
// before that run beside it. The handle's wait() blocks the
// host until the copy's own event. Full speed needs page-locked host memory
// (cuda_pinned_host.h); from pageable memory CUDA copies synchronously, still correct.
// Errors: a failing CUDA call aborts naming it, as the kernel tables do (cuda_context.h).
// Thread-safety: the training thread only.
#pragma once

#include <cstddef>

#include "backend/backend.h"

namespace zt::cuda {

CopyHandle start_copy_to_host(void* host_dst, const void* src, size_t bytes);
CopyHandle start_copy_from_host(void* dst, const void* host_src, size_t bytes);
CopyHandle start_prefetch_from_host(void* dst, const void* host_src, size_t bytes);

}  // namespace zt::cuda
