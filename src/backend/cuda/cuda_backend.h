// The CUDA backend (issue 28): arenas in device memory (cudaMalloc), the CUDA kernel
// tables (cuda_tables.h), copies and fills on the context's stream (cuda_context.h).
// One device per process: the local rank's under mpirun or srun, else device 0.
// Phase 1 of the issue: one GPU, materialized attention, no CUDA graphs.
// Thread-safety: as Backend.
#pragma once

#include "backend/backend.h"

namespace zt {

// The process's CUDA backend for a compute dtype, or why there is none (no device, the
// device or cuBLASLt cannot be opened).
StatusOr<const Backend*> cuda_backend(DType compute);
// The device this process uses: the local rank (OMPI_COMM_WORLD_LOCAL_RANK,
// SLURM_LOCALID, LOCAL_RANK) modulo the device count, else 0.
int cuda_local_device(int device_count);

}  // namespace zt
