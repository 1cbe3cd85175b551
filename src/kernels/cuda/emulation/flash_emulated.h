// The flash attention kernels (flash_attention.h) built for the CPU emulation (lanes.h), for
// their tests where there is no GPU: the same source as the library's CUDA build, compiled
// as C++ by flash_*_emulated.cc, over host memory. Same contracts as flash_attention.h.
// Thread-safety: not thread-safe (one emulated grid at a time).
#pragma once

#include <cstddef>

#include "core/status.h"
#include "tensor/dtype.h"

namespace zt::emu {

bool flash_attention_serves(DType t, int T, int C, int NH);
bool flash_attention_stores_ds(int B, int T, int C, int NH);
size_t flash_attention_workspace_bytes(int B, int T, int NH);
Status flash_attention_forward(DType t, void* atty, void* att, const void* qkv, int B, int T, int C, int NH);
Status flash_attention_backward(DType t, void* dqkv, const void* datty, const void* qkv, const void* att, int B,
                                int T, int C, int NH, void* workspace);

}  // namespace zt::emu
