// The linear layers of the half tables, including the row- and column-parallel forms
// whose result stays fp32 (linear_partial, linear_backward_partial: summed across tp
// ranks before one rounding). bf16: linear_bf16.h and gemm_bf16 (oneDNN bf16 GEMM with
// fp32 sums, one rounding per 16-bit output). f16: oneDNN 2.6 has no f16 matmul on most
// CPUs, so the weight (OC, C) is widened once per call and the fp32 linear (linear.h)
// runs on row chunks of the widened activations; each 16-bit output is rounded once, and
// dweight / dbias accumulate chunk after chunk, in chunk order (half_ops.h states the
// chunk sizes).
#include <cstdint>
#include <memory>

#include "kernels/cpu/gemm_bf16.h"
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

// The widened forward: out_h (N, OC) rounded to 16 bits, or out_f (N, OC) in fp32
// (exactly one of them); bias and residual (may alias out_h) may be null.
template <DType D>
void widened_linear_forward(half_t* out_h, float* out_f, const half_t* inp, const half_t* weight, const half_t* bias,
                            const half_t* residual, int64_t N, int C, int OC) {
  const std::unique_ptr<float[]> w = widen_weight<D>(weight, static_cast<int64_t>(OC) * C);
  const int64_t rows = half_chunk_rows(static_cast<int64_t>(C) + OC, kHalfGemmChunkRows);
  float* b = bias != nullptr ? half_scratch(0, OC) : nullptr;
  float* x = half_scratch(1, static_cast<size_t>(rows) * C);
  float* y = out_h != nullptr ? half_scratch(2, static_cast<size_t>(rows) * OC) : nullptr;
  if (b != nullptr) half_to_f32(D, b, bias, OC);
  for_each_chunk(N, rows, [&](int64_t r0, int64_t n) {
    float* yc = out_f != nullptr ? out_f + r0 * OC : y;
    half_to_f32(D, x, inp + r0 * C, n * C);
    if (residual != nullptr) half_to_f32(D, yc, residual + r0 * OC, n * OC);  // residual may alias out
    linear_forward(yc, x, w.get(), b, residual != nullptr ? yc : nullptr, n, C, OC);
    if (out_h != nullptr) f32_to_half(D, out_h + r0 * OC, yc, n * OC);
  });
}

// The widened backward: dinp rounded to 16 bits (dinp_h) or kept in fp32 (dinp_f), or
// skipped when both are null; dweight and dbias accumulate in fp32.
template <DType D>
void widened_linear_backward(half_t* dinp_h, float* dinp_f, float* dweight, float* dbias, const half_t* dout,
                             const half_t* inp, const half_t* weight, int64_t N, int C, int OC) {
  std::unique_ptr<float[]> w;  // only dinp reads the weight
  if (dinp_h != nullptr || dinp_f != nullptr) w = widen_weight<D>(weight, static_cast<int64_t>(OC) * C);
  const int64_t rows = half_chunk_rows(static_cast<int64_t>(OC) + 2 * static_cast<int64_t>(C), kHalfGemmChunkRows);
  float* dy = half_scratch(0, static_cast<size_t>(rows) * OC);
  float* x = half_scratch(1, static_cast<size_t>(rows) * C);
  float* dx = dinp_h != nullptr ? half_scratch(2, static_cast<size_t>(rows) * C) : nullptr;
  for_each_chunk(N, rows, [&](int64_t r0, int64_t n) {
    half_to_f32(D, dy, dout + r0 * OC, n * OC);
    half_to_f32(D, x, inp + r0 * C, n * C);
    linear_backward(dinp_f != nullptr ? dinp_f + r0 * C : dx, dweight, dbias, dy, x, w.get(), n, C, OC);
    if (dx != nullptr) f32_to_half(D, dinp_h + r0 * C, dx, n * C);
  });
}

void f16_linear_forward(half_t* out, const half_t* inp, const half_t* weight, const half_t* bias,
                        const half_t* residual, int64_t N, int C, int OC) {
  widened_linear_forward<DType::kF16>(out, nullptr, inp, weight, bias, residual, N, C, OC);
}

void f16_linear_partial(float* partial, const half_t* inp, const half_t* weight, int64_t N, int C, int OC) {
  widened_linear_forward<DType::kF16>(nullptr, partial, inp, weight, nullptr, nullptr, N, C, OC);
}

void f16_linear_backward(half_t* dinp, float* dweight, float* dbias, const half_t* dout, const half_t* inp,
                         const half_t* weight, int64_t N, int C, int OC) {
  widened_linear_backward<DType::kF16>(dinp, nullptr, dweight, dbias, dout, inp, weight, N, C, OC);
}

void f16_linear_backward_partial(float* dinp, float* dweight, float* dbias, const half_t* dout, const half_t* inp,
                                 const half_t* weight, int64_t N, int C, int OC) {
  widened_linear_backward<DType::kF16>(nullptr, dinp, dweight, dbias, dout, inp, weight, N, C, OC);
}

// The bf16 kernels over the table's storage (bf16 by the table's dtype).
constexpr DType kB = DType::kBF16;

void bf16_linear_forward(half_t* out, const half_t* inp, const half_t* weight, const half_t* bias,
                         const half_t* residual, int64_t N, int C, int OC) {
  linear_forward_bf16(as_format<kB>(out), as_format<kB>(inp), as_format<kB>(weight), as_format<kB>(bias),
                      as_format<kB>(residual), N, C, OC);
}

void bf16_linear_backward(half_t* dinp, float* dweight, float* dbias, const half_t* dout, const half_t* inp,
                          const half_t* weight, int64_t N, int C, int OC) {
  linear_backward_bf16(as_format<kB>(dinp), dweight, dbias, as_format<kB>(dout), as_format<kB>(inp),
                       as_format<kB>(weight), N, C, OC);
}

void bf16_linear_partial(float* partial, const half_t* inp, const half_t* weight, int64_t N, int C, int OC) {
  gemm_bf16(Trans::kNo, Trans::kYes, static_cast<int>(N), OC, C, 1.0f, as_format<kB>(inp), C, as_format<kB>(weight), C,
            0.0f, partial, OC);
}

void bf16_linear_backward_partial(float* dinp, float* dweight, float* dbias, const half_t* dout, const half_t* inp,
                                  const half_t* weight, int64_t N, int C, int OC) {
  gemm_bf16(Trans::kNo, Trans::kNo, static_cast<int>(N), C, OC, 1.0f, as_format<kB>(dout), OC, as_format<kB>(weight), C,
            0.0f, dinp, C);
  bf16_linear_backward(nullptr, dweight, dbias, dout, inp, weight, N, C, OC);
}

}  // namespace

void fill_half_linear_ops(ActivationOps<half_t>* ops) {
  const bool bf16 = ops->compute == DType::kBF16;
  ops->linear_forward = bf16 ? &bf16_linear_forward : &f16_linear_forward;
  ops->linear_backward = bf16 ? &bf16_linear_backward : &f16_linear_backward;
  ops->linear_partial = bf16 ? &bf16_linear_partial : &f16_linear_partial;
  ops->linear_backward_partial = bf16 ? &bf16_linear_backward_partial : &f16_linear_backward_partial;
}

}  // namespace zt
