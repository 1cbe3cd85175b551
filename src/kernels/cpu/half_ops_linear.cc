// The linear layers of the half tables, including the row- and column-parallel forms
// whose result stays fp32 (linear_partial, linear_backward_partial: summed across tp
// ranks before one rounding). bf16: linear_bf16.h and gemm_bf16 (oneDNN bf16 GEMM with
// fp32 sums, one rounding per 16-bit output): a native kernel, not an adapter. f16: oneDNN
// 2.6 has no f16 matmul on most CPUs, so through the one adapter (half_rows.h) the weight
// (OC, C) is widened once per call and the fp32 linear (linear.h) runs on row chunks of the
// widened activations; each 16-bit output is rounded once, and dweight / dbias accumulate
// chunk after chunk, in chunk order (half_ops.h states the chunk sizes).
#include <cstdint>
#include <memory>

#include "kernels/cpu/gemm_bf16.h"
#include "kernels/cpu/half_ops_impl.h"
#include "kernels/cpu/half_rows.h"
#include "kernels/cpu/linear.h"
#include "kernels/cpu/linear_bf16.h"

namespace zt {

namespace {

// The f16 linear through the one adapter (half_rows.h): the weight widened once per call into
// the calling thread's half_weight_scratch (kept between calls: the memory estimate counts the
// largest matrix), chunks of half_chunk_rows(C + OC) rows forward and of
// half_chunk_rows(OC + 2 C) rows backward (at most kHalfGemmChunkRows), whichever of the
// outputs is 16-bit or fp32.
constexpr DType kH = DType::kF16;

HalfChunking forward_chunking(int C, int OC) { return {int64_t{C} + OC, kHalfGemmChunkRows}; }
HalfChunking backward_chunking(int C, int OC) { return {int64_t{OC} + 2 * int64_t{C}, kHalfGemmChunkRows}; }

void f16_linear_forward(half_t* out, const half_t* inp, const half_t* weight, const half_t* bias,
                        const half_t* residual, int64_t N, int C, int OC) {
  auto kernel = [&](float* y, const float* x, const float* w, const float* b, int64_t n) {
    linear_forward(y, x, w, b, residual != nullptr ? y : nullptr, n, C, OC);  // y holds the residual
  };
  const HalfIn x{inp, C};
  const HalfWeight w{weight, int64_t{OC} * C};
  const HalfWhole b{bias, OC};
  if (residual != nullptr) {  // residual may alias out
    half_rows<kH>(forward_chunking(C, OC), N, kernel, HalfInOut{residual, out, OC}, x, w, b, kChunkRows);
  } else {
    half_rows<kH>(forward_chunking(C, OC), N, kernel, HalfOut{out, OC}, x, w, b, kChunkRows);
  }
}

void f16_linear_partial(float* partial, const half_t* inp, const half_t* weight, int64_t N, int C, int OC) {
  auto kernel = [&](float* y, const float* x, const float* w, int64_t n) {
    linear_forward(y, x, w, nullptr, nullptr, n, C, OC);
  };
  half_rows<kH>(forward_chunking(C, OC), N, kernel, RowData<float>{partial, OC}, HalfIn{inp, C},
                HalfWeight{weight, int64_t{OC} * C}, kChunkRows);
}

// dinp: a 16-bit HalfOut, an fp32 RowData<float>, or RowData<float>{nullptr} (not wanted);
// dweight and dbias accumulate chunk after chunk.
template <typename DinpRole>
void f16_linear_backward_into(DinpRole dinp, bool wants_dinp, float* dweight, float* dbias, const half_t* dout,
                              const half_t* inp, const half_t* weight, int64_t N, int C, int OC) {
  auto kernel = [&](float* dx, float* dw, float* db, const float* dy, const float* x, const float* w, int64_t n) {
    linear_backward(dx, dw, db, dy, x, w, n, C, OC);
  };
  half_rows<kH>(backward_chunking(C, OC), N, kernel, dinp, RowData<float>{dweight, 0}, RowData<float>{dbias, 0},
                HalfIn{dout, OC}, HalfIn{inp, C}, HalfWeight{wants_dinp ? weight : nullptr, int64_t{OC} * C},
                kChunkRows);  // only dinp reads the weight
}

void f16_linear_backward(half_t* dinp, float* dweight, float* dbias, const half_t* dout, const half_t* inp,
                         const half_t* weight, int64_t N, int C, int OC) {
  if (dinp != nullptr) {
    f16_linear_backward_into(HalfOut{dinp, C}, true, dweight, dbias, dout, inp, weight, N, C, OC);
  } else {
    f16_linear_backward_into(RowData<float>{nullptr, C}, false, dweight, dbias, dout, inp, weight, N, C, OC);
  }
}

void f16_linear_backward_partial(float* dinp, float* dweight, float* dbias, const half_t* dout, const half_t* inp,
                                 const half_t* weight, int64_t N, int C, int OC) {
  f16_linear_backward_into(RowData<float>{dinp, C}, dinp != nullptr, dweight, dbias, dout, inp, weight, N, C, OC);
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
