// Llama's grouped-query heads around attention on the GPU (contract: ActivationOps'
// gqa_pack / gqa_unpack, kernels/cpu/gqa.h), bit for bit the CPU's: the pack is a copy;
// the unpack sums each kv head's repeated gradients in fp32, in copy order, and rounds
// once. Pointers are device memory in storage t.
// Thread-safety: as elementwise.h.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "tensor/dtype.h"

namespace zt::cuda {

void gqa_pack(DType t, void* qkv, const void* q, const void* k, const void* v, int64_t BT, int NH, int NKV, int HD,
              cudaStream_t stream);
void gqa_unpack(DType t, void* dq, void* dk, void* dv, const void* dqkv, int64_t BT, int NH, int NKV, int HD,
                cudaStream_t stream);

}  // namespace zt::cuda
