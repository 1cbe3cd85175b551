// The bias gradient of a linear layer, dbias (OC) += column sums of dout (N, OC), as a
// deterministic two-pass reduction of our own (cuBLASLt's BGRAD epilogues assign rather
// than accumulate): fixed 256-row chunks, each summed by 8 row lanes in row order and a
// fixed tree, then the chunks added in chunk order per column. The order depends only
// on N and OC, never on the GPU or the launch.
// Thread-safety: as elementwise.h.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "tensor/dtype.h"

namespace zt::cuda {

// Floats of device workspace bias_grad needs.
int64_t bias_grad_workspace_floats(int64_t N, int OC);
// dout holds `t` elements; dbias and workspace are fp32 device memory.
void bias_grad(DType t, float* dbias, const void* dout, int64_t N, int OC, float* workspace, cudaStream_t stream);

}  // namespace zt::cuda
