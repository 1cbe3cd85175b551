// flash_attention.cu (the host side: shapes, saved state, dispatch) built for the CPU
// emulation (cuda_keywords.h), and emulated_kernels.h's entry points over it, on the default
// stream. check_launch has nothing to check: an emulated launch cannot fail to start.
#include "kernels/cuda/emulation/cuda_keywords.h"
// Separated, so the formatter keeps cuda_keywords.h first.
#include "kernels/cuda/flash_attention.cu"
#include "kernels/cuda/emulation/emulated_kernels.h"

namespace zt::cuda_emu {
void check_launch(const char*) {}
}  // namespace zt::cuda_emu

namespace zt::emu {

bool flash_attention_serves(DType t, int T, int C, int NH) { return cuda_emu::flash_attention_serves(t, T, C, NH); }

bool flash_attention_stores_ds(int B, int T, int C, int NH) {
  return cuda_emu::flash_attention_stores_ds(B, T, C, NH);
}

size_t flash_attention_workspace_bytes(int B, int T, int NH) {
  return cuda_emu::flash_attention_workspace_bytes(B, T, NH);
}

Status flash_attention_forward(DType t, void* atty, void* att, const void* qkv, int B, int T, int C, int NH) {
  return cuda_emu::flash_attention_forward(t, atty, att, qkv, B, T, C, NH, nullptr);
}

Status flash_attention_backward(DType t, void* dqkv, const void* datty, const void* qkv, const void* att, int B,
                                int T, int C, int NH, void* workspace, bool store_ds) {
  return cuda_emu::flash_attention_backward(t, dqkv, datty, qkv, att, B, T, C, NH, workspace, nullptr, store_ds);
}

}  // namespace zt::emu
