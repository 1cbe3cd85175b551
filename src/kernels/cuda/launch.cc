// check_launch (launch.h).
#include "kernels/cuda/launch.h"

#include "core/check.h"

namespace zt::cuda {

void check_launch(const char* kernel) {
  const cudaError_t e = cudaGetLastError();
  ZT_CHECK(e == cudaSuccess, "CUDA kernel %s did not launch: %s (%s)", kernel, cudaGetErrorName(e),
           cudaGetErrorString(e));
}

}  // namespace zt::cuda
