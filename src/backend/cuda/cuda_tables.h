// The kernel tables of the CUDA backend: ActivationOps<float> / KernelOps for fp32 and
// ActivationOps<half_t> for bf16 and f16, each entry zerotrain's own CUDA kernel or a
// cuBLASLt product (kernels/cuda/), queued on the context's stream (cuda_context.h).
// Host inputs of the contract (tokens, targets, LAMB's running sums) are staged to the
// device inside the entry. sum_squares adds into a device double the Trainer reads once
// per step; LAMB's sums still come back through one copy each. Entries for tensor parallelism's vocabulary-parallel pieces
// are refused by an abort naming the entry: several ranks with device cuda are refused
// before a model is built (NCCL comes with issue 29).
// Thread-safety: immutable tables.
#pragma once

#include "kernels/kernel_ops.h"

namespace zt::cuda {

KernelOps make_cuda_f32_ops();
ActivationOps<half_t> make_cuda_half_ops(DType compute);

}  // namespace zt::cuda
