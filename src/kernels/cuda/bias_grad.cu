// bias_grad (bias_grad.h): column_reduce.cuh's two passes over dout.
#include "kernels/cuda/bias_grad.h"

#include "kernels/cuda/column_reduce.cuh"
#include "kernels/cuda/half_bits.cuh"
#include "kernels/cuda/launch.h"

namespace zt::cuda {

namespace {

template <class H>
struct BiasTerm {
  const typename H::T* dout;
  int C;
  __device__ void operator()(int64_t r, int c, float* t) const { t[0] = H::load(dout[r * C + c]); }
};

}  // namespace

int64_t bias_grad_workspace_floats(int64_t N, int OC) { return column_workspace_floats(1, N, OC); }

void bias_grad(DType t, float* dbias, const void* dout, int64_t N, int OC, float* workspace, cudaStream_t stream) {
  with_storage(t, [&](auto h) {
    using H = decltype(h);
    column_sums<1>(ColumnTargets<1>{{dbias}}, N, OC, BiasTerm<H>{static_cast<const typename H::T*>(dout), OC},
                   workspace, stream);
  });
  check_launch("bias_grad");
}

}  // namespace zt::cuda
