// bias_grad.cu (and column_reduce.cuh's passes) built for the CPU emulation (cuda_keywords.h),
// and emulated_kernels.h's entry points over it.
#include "kernels/cuda/emulation/cuda_keywords.h"
// Separated, so the formatter keeps cuda_keywords.h first.
#include "kernels/cuda/bias_grad.cu"
#include "kernels/cuda/emulation/emulated_kernels.h"

namespace zt::emu {

void bias_grad(DType t, float* dbias, const void* dout, int64_t N, int OC, float* workspace) {
  cuda_emu::bias_grad(t, dbias, dout, N, OC, workspace, nullptr);
}

int64_t bias_grad_workspace_floats(int64_t N, int OC) { return cuda_emu::bias_grad_workspace_floats(N, OC); }

}  // namespace zt::emu
