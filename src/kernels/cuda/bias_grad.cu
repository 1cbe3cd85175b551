// bias_grad (bias_grad.h).
#include "kernels/cuda/bias_grad.h"

#include "kernels/cuda/half_bits.cuh"
#include "kernels/cuda/launch.h"
#include "kernels/cuda/vmath.cuh"

namespace zt::cuda {

namespace {

constexpr int kRowsPerChunk = 256;
constexpr int kLanes = 8;  // row lanes per column

// Block (32 columns, 8 row lanes), grid (column tiles, row chunks).
template <class H>
__global__ void bias_grad_chunks(float* partial, const typename H::T* dout, int64_t N, int OC) {
  __shared__ float sums[kLanes][32];
  const int col = blockIdx.x * 32 + threadIdx.x;
  const int64_t r0 = static_cast<int64_t>(blockIdx.y) * kRowsPerChunk;
  float acc = 0.0f;
  if (col < OC) {
    for (int64_t r = r0 + threadIdx.y; r < r0 + kRowsPerChunk && r < N; r += kLanes) {
      acc = vadd(acc, H::load(dout[r * OC + col]));
    }
  }
  sums[threadIdx.y][threadIdx.x] = acc;
  __syncthreads();
  if (threadIdx.y == 0 && col < OC) {
    const float (*s)[32] = sums;
    const int x = threadIdx.x;
    const float t = vadd(vadd(vadd(s[0][x], s[4][x]), vadd(s[2][x], s[6][x])),
                         vadd(vadd(s[1][x], s[5][x]), vadd(s[3][x], s[7][x])));
    partial[static_cast<int64_t>(blockIdx.y) * OC + col] = t;
  }
}

__global__ void bias_grad_combine(float* dbias, const float* partial, int64_t chunks, int OC) {
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (col >= OC) return;
  float total = 0.0f;
  for (int64_t c = 0; c < chunks; ++c) total = vadd(total, partial[c * OC + col]);
  dbias[col] = vadd(dbias[col], total);
}

int64_t row_chunks(int64_t N) { return (N + kRowsPerChunk - 1) / kRowsPerChunk; }

}  // namespace

int64_t bias_grad_workspace_floats(int64_t N, int OC) { return row_chunks(N) * OC; }

void bias_grad(DType t, float* dbias, const void* dout, int64_t N, int OC, float* workspace, cudaStream_t stream) {
  if (N <= 0 || OC <= 0) return;
  const dim3 block(32, kLanes), grid(static_cast<unsigned>((OC + 31) / 32), static_cast<unsigned>(row_chunks(N)));
  with_storage(t, [&](auto h) {
    using H = decltype(h);
    bias_grad_chunks<H><<<grid, block, 0, stream>>>(workspace, static_cast<const typename H::T*>(dout), N, OC);
  });
  check_launch("bias_grad");
  bias_grad_combine<<<static_cast<unsigned>((OC + 255) / 256), 256, 0, stream>>>(dbias, workspace, row_chunks(N), OC);
  check_launch("bias_grad (combine)");
}

}  // namespace zt::cuda
