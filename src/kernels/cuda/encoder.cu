// Embedding forward/backward and the rotary rotation (encoder.h).
#include "kernels/cuda/encoder.h"

#include <cub/device/device_radix_sort.cuh>

#include "core/check.h"

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

// Block (sorted position i, column tile of 256): the block at the first row of a token adds
// that token's rows, ascending, one thread per channel; every other block leaves.
template <class H>
__global__ void encoder_wte_kernel(float* dwte, const typename H::T* dout, const int32_t* keys, const int32_t* rows,
                                   int64_t n, int C) {
  const int64_t i = blockIdx.x;
  if (i > 0 && keys[i] == keys[i - 1]) return;
  const int c = blockIdx.y * blockDim.x + threadIdx.x;
  if (c >= C) return;
  const int32_t token = keys[i];
  float* dst = dwte + static_cast<int64_t>(token) * C + c;
  float acc = *dst;
  for (int64_t j = i; j < n && keys[j] == token; ++j) {
    acc = vadd(acc, H::load(dout[static_cast<int64_t>(rows[j]) * C + c]));
  }
  *dst = acc;
}

__global__ void iota_kernel(int32_t* out, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += int64_t{gridDim.x} * blockDim.x) {
    out[i] = static_cast<int32_t>(i);
  }
}

// The workspace: sorted tokens, row indices in and out, then CUB's temporary storage.
struct SortSpace {
  int32_t *keys, *rows_in, *rows;
  void* temp;
  size_t temp_bytes;
};

// A failed sort is a broken invariant (the workspace is sized for it), as a failed launch.
void check_sort(cudaError_t e) {
  ZT_CHECK(e == cudaSuccess, "CUDA encoder_backward's token sort: %s (%s)", cudaGetErrorName(e), cudaGetErrorString(e));
}

size_t aligned(size_t bytes) { return (bytes + 255) / 256 * 256; }

size_t sort_temp_bytes(int64_t n) {
  size_t bytes = 0;
  cub::DeviceRadixSort::SortPairs(nullptr, bytes, static_cast<const int32_t*>(nullptr), static_cast<int32_t*>(nullptr),
                                  static_cast<const int32_t*>(nullptr), static_cast<int32_t*>(nullptr), n);
  return bytes;
}

SortSpace sort_space(void* workspace, int64_t n) {
  char* p = static_cast<char*>(workspace);
  const size_t a = aligned(static_cast<size_t>(n) * sizeof(int32_t));
  return {reinterpret_cast<int32_t*>(p), reinterpret_cast<int32_t*>(p + a), reinterpret_cast<int32_t*>(p + 2 * a),
          p + 3 * a, sort_temp_bytes(n)};
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

size_t encoder_backward_workspace_bytes(int64_t rows) {
  return 3 * aligned(static_cast<size_t>(rows) * sizeof(int32_t)) + sort_temp_bytes(rows);
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

void encoder_backward(DType t, float* dwte, float* dwpe, const void* dout, const int32_t* tokens, int B, int T, int C,
                      void* workspace, cudaStream_t stream) {
  const int64_t n = static_cast<int64_t>(B) * T;
  if (n <= 0) return;
  SortSpace sp = sort_space(workspace, n);
  iota_kernel<<<grid_for(n), kThreads, 0, stream>>>(sp.rows_in, n);
  const cudaError_t e = cub::DeviceRadixSort::SortPairs(sp.temp, sp.temp_bytes, tokens, sp.keys, sp.rows_in, sp.rows,
                                                        n, 0, 32, stream);
  check_sort(e);
  with_storage(t, [&](auto h) {
    using H = decltype(h);
    using X = typename H::T;
    const dim3 grid(static_cast<unsigned>(n), static_cast<unsigned>((C + 255) / 256));
    encoder_wte_kernel<H><<<grid, 256, 0, stream>>>(dwte, static_cast<const X*>(dout), sp.keys, sp.rows, n, C);
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
