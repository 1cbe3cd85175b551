// The linear layers of the half tables. bf16: linear_bf16.h (oneDNN bf16 GEMM with fp32
// sums, one rounding per output). f16: oneDNN 2.6 has no f16 matmul on most CPUs, so the
// weight (OC, C) is widened once per call and the fp32 linear (linear.h) runs on row
// chunks of the widened activations; each output is rounded once, and dweight / dbias
// accumulate chunk after chunk, in chunk order (half_ops.h states the chunk sizes).
#include <cstdint>
#include <memory>

#include "kernels/cpu/half_ops_impl.h"
#include "kernels/cpu/linear.h"
#include "kernels/cpu/linear_bf16.h"

namespace zt {

namespace {

// The whole weight in fp32 (n values), in a buffer freed by the caller's scope.
template <DType D>
std::unique_ptr<float[]> widen_weight(const half_t* weight, int64_t n) {
  std::unique_ptr<float[]> w(new float[static_cast<size_t>(n)]);
  half_to_f32(D, w.get(), weight, n);
  return w;
}

template <DType D>
void half_linear_forward(half_t* out, const half_t* inp, const half_t* weight, const half_t* bias,
                         const half_t* residual, int64_t N, int C, int OC) {
  const std::unique_ptr<float[]> w = widen_weight<D>(weight, static_cast<int64_t>(OC) * C);
  const int64_t rows = half_chunk_rows(static_cast<int64_t>(C) + OC, kHalfGemmChunkRows);
  float* b = bias != nullptr ? half_scratch(0, OC) : nullptr;
  float* x = half_scratch(1, static_cast<size_t>(rows) * C);
  float* y = half_scratch(2, static_cast<size_t>(rows) * OC);
  if (b != nullptr) half_to_f32(D, b, bias, OC);
  for_each_chunk(N, rows, [&](int64_t r0, int64_t n) {
    half_to_f32(D, x, inp + r0 * C, n * C);
    if (residual != nullptr) half_to_f32(D, y, residual + r0 * OC, n * OC);  // residual may alias out
    linear_forward(y, x, w.get(), b, residual != nullptr ? y : nullptr, n, C, OC);
    f32_to_half(D, out + r0 * OC, y, n * OC);
  });
}

template <DType D>
void half_linear_backward(half_t* dinp, float* dweight, float* dbias, const half_t* dout, const half_t* inp,
                          const half_t* weight, int64_t N, int C, int OC) {
  std::unique_ptr<float[]> w;  // only dinp reads the weight
  if (dinp != nullptr) w = widen_weight<D>(weight, static_cast<int64_t>(OC) * C);
  const int64_t rows = half_chunk_rows(static_cast<int64_t>(OC) + 2 * static_cast<int64_t>(C), kHalfGemmChunkRows);
  float* dy = half_scratch(0, static_cast<size_t>(rows) * OC);
  float* x = half_scratch(1, static_cast<size_t>(rows) * C);
  float* dx = dinp != nullptr ? half_scratch(2, static_cast<size_t>(rows) * C) : nullptr;
  for_each_chunk(N, rows, [&](int64_t r0, int64_t n) {
    half_to_f32(D, dy, dout + r0 * OC, n * OC);
    half_to_f32(D, x, inp + r0 * C, n * C);
    linear_backward(dx, dweight, dbias, dy, x, w.get(), n, C, OC);
    if (dx != nullptr) f32_to_half(D, dinp + r0 * C, dx, n * C);
  });
}

}  // namespace

void fill_half_linear_ops(ActivationOps<half_t>* ops) {
  if (ops->compute == DType::kBF16) {
    ops->linear_forward = &linear_forward_bf16;
    ops->linear_backward = &linear_backward_bf16;
  } else {
    ops->linear_forward = &half_linear_forward<DType::kF16>;
    ops->linear_backward = &half_linear_backward<DType::kF16>;
  }
}

}  // namespace zt
