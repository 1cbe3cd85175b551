// Cross-entropy (crossentropy.h): crossentropy_impl.h's two row passes by a group of W
// lanes per row, and its elementwise backward.
#include "kernels/cuda/crossentropy.h"

#include "kernels/cuda/half_bits.cuh"
#include "kernels/cuda/lane_order.cuh"
#include "kernels/cuda/launch.h"
#include "kernels/kernel_args.h"

namespace zt::cuda {

namespace {

template <class O, class H>
__global__ void crossentropy_forward_kernel(float* losses, float* stats, const typename H::T* logits,
                                            const int32_t* targets, int64_t N, int V, int Vp) {
  constexpr int W = O::kWidth;
  const int64_t t = blockIdx.x * int64_t{blockDim.x} + threadIdx.x;
  const int64_t r = t / W;
  const int lane = static_cast<int>(t % W);
  const bool live = r < N && targets[r] >= 0;  // the same for the whole group
  const typename H::T* row = logits + (r < N ? r : 0) * Vp;
  float mx = -INFINITY;
  if (live) for (int i = lane; i < V; i += W) mx = vmax(mx, H::load(row[i]));
  const float m = group_max<W>(mx);
  float acc = 0.0f;
  if (live) {
    for (int i = lane; i < V; i += W) acc = vadd(acc, vexp<O::kFused>(vsub(H::load(row[i]), m)));
    // The CPU's last vector pads lanes past V with -inf, whose clamped exp (~1.2e-38) it adds.
    if (V % W != 0 && lane >= V % W) acc = vadd(acc, vexp<O::kFused>(vsub(-INFINITY, m)));
  }
  const float sum = group_sum<W>(acc);
  if (r >= N || lane != 0) return;
  if (!live) {
    losses[r] = 0.0f;
    stats[2 * r] = 0.0f;
    stats[2 * r + 1] = 0.0f;
    return;
  }
  const float logsum = static_cast<float>(log(static_cast<double>(sum)));
  stats[2 * r] = m;
  stats[2 * r + 1] = logsum;
  losses[r] = vadd(vsub(m, H::load(row[targets[r]])), logsum);
}

// One thread per element of (N, Vp).
template <class O, class H>
__global__ void crossentropy_backward_kernel(typename H::T* dlogits, const typename H::T* logits, const float* stats,
                                             const int32_t* targets, float dloss, int64_t N, int V, int Vp) {
  const int64_t total = N * Vp;
  for (int64_t e = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; e < total; e += int64_t{gridDim.x} * blockDim.x) {
    const int64_t r = e / Vp;
    const int j = static_cast<int>(e % Vp);
    const int32_t tgt = targets[r];
    float d = 0.0f;
    if (tgt >= 0 && j < V) {
      const float p = vexp<O::kFused>(vsub(vsub(H::load(logits[e]), stats[2 * r]), stats[2 * r + 1]));
      d = vmul(p, dloss);
      if (j == tgt) d = vsub(d, dloss);
    }
    dlogits[e] = H::store(d);
  }
}

// One thread adds the losses in index order, in double, as the CPU does (the same
// bits as masked_loss_sum in kernel_args.h); the block first stages each chunk of losses
// and targets in shared memory with coalesced loads, so the serial adds wait on shared
// memory, not on global loads one at a time (measured on an H200: 1.2 ms a call for 16,384
// tokens when thread 0 read global memory itself).
constexpr int kLossChunk = 2048;
__global__ void loss_sum_kernel(double* out, const float* losses, const int32_t* targets, int64_t n) {
  __shared__ float l_s[kLossChunk];
  __shared__ int32_t t_s[kLossChunk];
  double sum = 0.0;
  int64_t count = 0;
  for (int64_t c0 = 0; c0 < n; c0 += kLossChunk) {
    const int len = static_cast<int>(n - c0 < kLossChunk ? n - c0 : kLossChunk);
    for (int i = threadIdx.x; i < len; i += blockDim.x) l_s[i] = losses[c0 + i], t_s[i] = targets[c0 + i];
    __syncthreads();
    if (threadIdx.x == 0) {
      for (int i = 0; i < len; ++i) {
        if (t_s[i] == kIgnoreIndex) continue;
        sum += l_s[i];
        ++count;
      }
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) out[0] = sum, out[1] = static_cast<double>(count);
}

}  // namespace

void loss_sum(double* out, const float* losses, const int32_t* targets, int64_t n, cudaStream_t stream) {
  loss_sum_kernel<<<1, 256, 0, stream>>>(out, losses, targets, n);
  check_launch("loss_sum");
}

void crossentropy_forward(DType t, CpuOrder o, float* losses, float* stats, const void* logits,
                          const int32_t* targets, int64_t N, int V, int Vp, cudaStream_t stream) {
  if (N <= 0) return;
  with_order_storage(o, t, [&](auto ord, auto h) {
    using O = decltype(ord);
    using H = decltype(h);
    const unsigned blocks = static_cast<unsigned>((N * O::kWidth + kThreads - 1) / kThreads);
    crossentropy_forward_kernel<O, H><<<blocks, kThreads, 0, stream>>>(
        losses, stats, static_cast<const typename H::T*>(logits), targets, N, V, Vp);
  });
  check_launch("crossentropy_forward");
}

void crossentropy_backward(DType t, CpuOrder o, void* dlogits, const void* logits, const float* stats,
                           const int32_t* targets, float dloss, int64_t N, int V, int Vp, cudaStream_t stream) {
  if (N <= 0) return;
  with_order_storage(o, t, [&](auto ord, auto h) {
    using O = decltype(ord);
    using H = decltype(h);
    using T = typename H::T;
    crossentropy_backward_kernel<O, H><<<grid_for(N * Vp), kThreads, 0, stream>>>(
        static_cast<T*>(dlogits), static_cast<const T*>(logits), stats, targets, dloss, N, V, Vp);
  });
  check_launch("crossentropy_backward");
}

}  // namespace zt::cuda
