// Embedding forward/backward and the rotary rotation (encoder.h).
#include "kernels/cuda/encoder.h"

#include <algorithm>
#include <numeric>

#include "kernels/cuda/half_bits.cuh"
#include "kernels/cuda/launch.h"
#include "kernels/cuda/vmath.cuh"

namespace zt::cuda {

namespace {

template <class H>
__global__ void encoder_forward_kernel(typename H::T* out, const int32_t* tokens, const typename H::T* wte,
                                       const typename H::T* wpe, int64_t rows, int T, int C) {
  const int64_t total = rows * C;
  for (int64_t e = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; e < total; e += int64_t{gridDim.x} * blockDim.x) {
    const int64_t bt = e / C;
    const int c = static_cast<int>(e % C);
    const float x = H::load(wte[static_cast<int64_t>(tokens[bt]) * C + c]);
    out[e] = wpe == nullptr ? H::store(x) : H::store(vadd(x, H::load(wpe[(bt % T) * C + c])));
  }
}

// Block (group, column tile of 256): one thread per channel adds the group's rows in order.
template <class H>
__global__ void encoder_wte_kernel(float* dwte, const typename H::T* dout, DeviceBuckets b, int C) {
  const int g = blockIdx.x;
  const int c = blockIdx.y * blockDim.x + threadIdx.x;
  if (c >= C) return;
  float* dst = dwte + static_cast<int64_t>(b.tokens[g]) * C + c;
  float acc = *dst;
  for (int i = b.starts[g]; i < b.starts[g + 1]; ++i) acc = vadd(acc, H::load(dout[static_cast<int64_t>(b.rows[i]) * C + c]));
  *dst = acc;
}

template <class H>
__global__ void encoder_wpe_kernel(float* dwpe, const typename H::T* dout, int B, int T, int C) {
  const int64_t e = blockIdx.x * int64_t{blockDim.x} + threadIdx.x;
  if (e >= static_cast<int64_t>(T) * C) return;
  const int64_t t = e / C, c = e % C;
  float acc = dwpe[e];
  for (int b = 0; b < B; ++b) acc = vadd(acc, H::load(dout[(static_cast<int64_t>(b) * T + t) * C + c]));
  dwpe[e] = acc;
}

// One thread per (row, head, pair i): reads both halves of the pair before writing.
template <class H>
__global__ void rope_kernel(typename H::T* out, const typename H::T* inp, const float* freqs, int64_t rows, int T,
                            int NH, int HD, int pos0, float sign) {
  const int half = HD / 2;
  const int64_t total = rows * NH * half;
  for (int64_t e = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; e < total; e += int64_t{gridDim.x} * blockDim.x) {
    const int i = static_cast<int>(e % half);
    const int64_t rh = e / half;  // (bt, h)
    const int64_t bt = rh / NH;
    const float* f = freqs + static_cast<int64_t>(pos0 + bt % T) * HD;
    const float c = f[2 * i], s = vmul(sign, f[2 * i + 1]);
    const int64_t off = rh * HD;
    const float a = H::load(inp[off + i]), b = H::load(inp[off + i + half]);
    out[off + i] = H::store(vsub(vmul(a, c), vmul(b, s)));
    out[off + i + half] = H::store(vadd(vmul(b, c), vmul(a, s)));
  }
}

}  // namespace

EncoderBuckets encoder_buckets(const int32_t* host_tokens, int64_t rows) {
  EncoderBuckets b;
  b.rows.resize(static_cast<size_t>(rows));
  std::iota(b.rows.begin(), b.rows.end(), 0);
  std::stable_sort(b.rows.begin(), b.rows.end(),
                   [&](int32_t x, int32_t y) { return host_tokens[x] < host_tokens[y]; });
  for (int64_t i = 0; i < rows; ++i) {
    if (i == 0 || host_tokens[b.rows[i]] != host_tokens[b.rows[i - 1]]) {
      b.starts.push_back(static_cast<int32_t>(i));
      b.tokens.push_back(host_tokens[b.rows[i]]);
    }
  }
  b.starts.push_back(static_cast<int32_t>(rows));
  return b;
}

void encoder_forward(DType t, void* out, const int32_t* tokens, const void* wte, const void* wpe, int B, int T, int C,
                     cudaStream_t stream) {
  const int64_t rows = static_cast<int64_t>(B) * T;
  if (rows <= 0) return;
  with_storage(t, [&](auto h) {
    using H = decltype(h);
    using X = typename H::T;
    encoder_forward_kernel<H><<<grid_for(rows * C), kThreads, 0, stream>>>(
        static_cast<X*>(out), tokens, static_cast<const X*>(wte), static_cast<const X*>(wpe), rows, T, C);
  });
  check_launch("encoder_forward");
}

void encoder_backward(DType t, float* dwte, float* dwpe, const void* dout, const DeviceBuckets& buckets, int B, int T,
                      int C, cudaStream_t stream) {
  with_storage(t, [&](auto h) {
    using H = decltype(h);
    using X = typename H::T;
    if (buckets.groups > 0) {
      const dim3 grid(static_cast<unsigned>(buckets.groups), static_cast<unsigned>((C + 255) / 256));
      encoder_wte_kernel<H><<<grid, 256, 0, stream>>>(dwte, static_cast<const X*>(dout), buckets, C);
    }
    if (dwpe != nullptr) {
      const int64_t n = static_cast<int64_t>(T) * C;
      encoder_wpe_kernel<H><<<static_cast<unsigned>((n + 255) / 256), 256, 0, stream>>>(
          dwpe, static_cast<const X*>(dout), B, T, C);
    }
  });
  check_launch("encoder_backward");
}

void rope_rotate(DType t, void* out, const void* inp, const float* freqs, int B, int T, int NH, int HD, int pos0,
                 float sign, cudaStream_t stream) {
  const int64_t rows = static_cast<int64_t>(B) * T;
  if (rows <= 0) return;
  with_storage(t, [&](auto h) {
    using H = decltype(h);
    using X = typename H::T;
    rope_kernel<H><<<grid_for(rows * NH * (HD / 2)), kThreads, 0, stream>>>(
        static_cast<X*>(out), static_cast<const X*>(inp), freqs, rows, T, NH, HD, pos0, sign);
  });
  check_launch("rope_rotate");
}

}  // namespace zt::cuda
