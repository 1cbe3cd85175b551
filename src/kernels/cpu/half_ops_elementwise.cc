// The row-wise and elementwise half kernels (LayerNorm, GELU, cross-entropy) and the
// casts: widen a chunk, run the ISA-dispatched fp32 kernel from cpu_kernels(), round the
// chunk's outputs once. Rows are independent in every fp32 kernel here and the LayerNorm
// parameter gradients sum rows in row order, so chunking changes no bit of any result.
// Outputs may alias inputs chunk for chunk (gelu_backward's dinp = dout,
// crossentropy_backward's dlogits = logits): a chunk is widened before it is written.
#include <cstdint>

#include "kernels/cpu/half_ops_impl.h"
#include "kernels/cpu/kernel_table.h"

namespace zt {

namespace {

template <DType D>
void half_layernorm_forward(half_t* out, float* mean, float* rstd, const half_t* inp, const half_t* weight,
                       const half_t* bias, int64_t N, int C) {
  const KernelTable& k = cpu_kernels();
  const int64_t rows = half_chunk_rows(2 * static_cast<int64_t>(C));
  float* wb = half_scratch(0, 2 * static_cast<size_t>(C));
  float* x = half_scratch(1, static_cast<size_t>(rows) * C);
  float* y = half_scratch(2, static_cast<size_t>(rows) * C);
  half_to_f32(D, wb, weight, C);
  half_to_f32(D, wb + C, bias, C);
  for_each_chunk(N, rows, [&](int64_t r0, int64_t n) {
    half_to_f32(D, x, inp + r0 * C, n * C);
    k.layernorm_forward(y, mean + r0, rstd + r0, x, wb, wb + C, n, C);
    f32_to_half(D, out + r0 * C, y, n * C);
  });
}

// dinp (half) += the input gradient: widened, accumulated by the fp32 kernel, rounded back.
template <DType D>
void half_layernorm_backward(half_t* dinp, float* dweight, float* dbias, const half_t* dout, const half_t* inp,
                        const half_t* weight, const float* mean, const float* rstd, int64_t N, int C) {
  const KernelTable& k = cpu_kernels();
  const int64_t rows = half_chunk_rows(3 * static_cast<int64_t>(C));
  const size_t chunk = static_cast<size_t>(rows) * C;
  float* w = half_scratch(0, C);
  float* dx = half_scratch(1, chunk);
  float* dy = half_scratch(2, chunk);
  float* x = half_scratch(3, chunk);
  half_to_f32(D, w, weight, C);
  for_each_chunk(N, rows, [&](int64_t r0, int64_t n) {
    half_to_f32(D, dx, dinp + r0 * C, n * C);
    half_to_f32(D, dy, dout + r0 * C, n * C);
    half_to_f32(D, x, inp + r0 * C, n * C);
    k.layernorm_backward(dx, dweight, dbias, dy, x, w, mean + r0, rstd + r0, n, C);
    f32_to_half(D, dinp + r0 * C, dx, n * C);
  });
}

template <DType D>
void half_gelu_forward(half_t* out, const half_t* inp, int64_t count) {
  const KernelTable& k = cpu_kernels();
  half_flat<D, 1, 1>(count, {inp}, {{{out, 0}}}, [&](const auto& x, int64_t n) { k.gelu_forward(x[0], x[0], n); });
}

template <DType D>
void half_gelu_backward(half_t* dinp, const half_t* inp, const half_t* dout, int64_t count) {
  const KernelTable& k = cpu_kernels();
  half_flat<D, 2, 1>(count, {inp, dout}, {{{dinp, 1}}},
                     [&](const auto& x, int64_t n) { k.gelu_backward(x[1], x[0], x[1], n); });
}

template <DType D>
void half_crossentropy_forward(float* losses, float* stats, const half_t* logits, const int32_t* targets, int64_t N,
                          int V, int Vp) {
  const KernelTable& k = cpu_kernels();
  const int64_t rows = half_chunk_rows(Vp);
  float* l = half_scratch(0, static_cast<size_t>(rows) * Vp);
  for_each_chunk(N, rows, [&](int64_t r0, int64_t n) {
    half_to_f32(D, l, logits + r0 * Vp, n * Vp);
    k.crossentropy_forward(losses + r0, stats + 2 * r0, l, targets + r0, n, V, Vp);
  });
}

template <DType D>
void half_crossentropy_backward(half_t* dlogits, const half_t* logits, const float* stats, const int32_t* targets,
                           float dloss, int64_t N, int V, int Vp) {
  const KernelTable& k = cpu_kernels();
  const int64_t rows = half_chunk_rows(Vp);
  float* l = half_scratch(0, static_cast<size_t>(rows) * Vp);
  for_each_chunk(N, rows, [&](int64_t r0, int64_t n) {
    half_to_f32(D, l, logits + r0 * Vp, n * Vp);
    k.crossentropy_backward(l, l, stats + 2 * r0, targets + r0, dloss, n, V, Vp);  // in place in fp32
    f32_to_half(D, dlogits + r0 * Vp, l, n * Vp);
  });
}

}  // namespace

void fill_half_elementwise_ops(ActivationOps<half_t>* ops) {
  ops->layernorm_forward = ZT_HALF_PICK(ops, half_layernorm_forward);
  ops->layernorm_backward = ZT_HALF_PICK(ops, half_layernorm_backward);
  ops->gelu_forward = ZT_HALF_PICK(ops, half_gelu_forward);
  ops->gelu_backward = ZT_HALF_PICK(ops, half_gelu_backward);
  ops->crossentropy_forward = ZT_HALF_PICK(ops, half_crossentropy_forward);
  ops->crossentropy_backward = ZT_HALF_PICK(ops, half_crossentropy_backward);
  const bool bf16 = ops->compute == DType::kBF16;
  ops->to_f32 = bf16 ? &bf16_to_f32 : &f16_to_f32;
  ops->from_f32 = bf16 ? &f32_to_bf16 : &f32_to_f16;
}

}  // namespace zt
