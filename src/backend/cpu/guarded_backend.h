// The guarded CPU backend (issue 27's proof of the device-neutral seam, with no GPU): the
// CPU backend's kernels over arenas that host code cannot touch. Every arena is its own
// mmap'd pages, kept PROT_NONE except while one of the backend's kernels, copies or
// zero-fills runs, so a read or write of arena memory from anywhere else (the engine, the
// model, the optimizer's host code, a checkpoint) faults at once, as it would on a GPU.
// The results are the CPU backend's, bit for bit: the same kernels run on the same bytes.
// Tests select it with ZT_TEST_BACKEND=guarded (backend_for and cpu_backend() then return
// it for the CPU). Process groups move arena data inside its memory domain
// (memory_domain(), comm/memory_domain.h), so in-process ranks (ThreadWorld) run on it
// too; MPI ranks do not (the MPI library may touch the pages outside the domain).
// Copies check their ends as a device's would: copy() and zero() inside arenas,
// copy_to_host() from an arena into host memory, copy_from_host() the other way; a
// pointer on the wrong side stops the process (ZT_CHECK), naming the call. Started
// copies happen as late as a device could make them: to host at wait_copy (a host read
// before it sees old bytes), from host at the start with the source checked unchanged
// at wait_copy; a prefetch (start_prefetch_from_host) fills its destination with NaNs at
// the start and lands at its join, so work that reads it before the join, or a missing
// join, computes NaNs.
// Limit: the pages are open to every thread while any kernel, copy or transfer runs, so a
// host read that overlaps one goes unseen; one that does not faults.
// Thread-safety: the unlock scope nests and is shared by threads (a counted lock).
#pragma once

#include "backend/backend.h"

namespace zt {

// The guarded backend for a compute dtype (one per dtype, process-wide).
const Backend& guarded_cpu_backend(DType compute);

// True when ZT_TEST_BACKEND=guarded: cpu_backend() and backend_for(kCpu, ...) return the
// guarded backends.
bool guarded_backend_requested();

}  // namespace zt
