// The CUDA kernels built for the CPU emulation (lanes.h), for their tests where there is no
// GPU: the same source as the library's CUDA build, compiled as C++ by the *_emulated.cc files,
// over host memory, on no stream. Same contracts as flash_attention.h and bias_grad.h.
// Thread-safety: not thread-safe (one emulated grid at a time).
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/status.h"
#include "tensor/dtype.h"

namespace zt::emu {

bool flash_attention_serves(DType t, int T, int C, int NH);
bool flash_attention_stores_ds(int B, int T, int C, int NH);
size_t flash_attention_workspace_bytes(int B, int T, int NH);
Status flash_attention_forward(DType t, void* atty, void* att, const void* qkv, int B, int T, int C, int NH);
Status flash_attention_backward(DType t, void* dqkv, const void* datty, const void* qkv, const void* att, int B,
                                int T, int C, int NH, void* workspace, bool store_ds = true);

void bias_grad(DType t, float* dbias, const void* dout, int64_t N, int OC, float* workspace);
int64_t bias_grad_workspace_floats(int64_t N, int OC);

}  // namespace zt::emu
