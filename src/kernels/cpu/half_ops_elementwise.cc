// The row-wise and elementwise half kernels (LayerNorm, GELU, cross-entropy) and the
// casts: each is the half_rows or half_flat adapter over the ISA-dispatched fp32 kernel
// from cpu_kernels() (widen a chunk, run it, round the chunk's outputs once). Rows are independent in every fp32 kernel here and the LayerNorm
// parameter gradients sum rows in row order, so chunking changes no bit of any result.
// Outputs may alias inputs chunk for chunk (gelu_backward's dinp = dout,
// crossentropy_backward's dlogits = logits): a chunk is widened before it is written.
#include <cstdint>

#include "core/check.h"
#include "kernels/cpu/fake_quant.h"
#include "kernels/cpu/half_ops_impl.h"
#include "kernels/cpu/half_rows.h"
#include "kernels/cpu/kernel_table.h"

namespace zt {

namespace {

// The table's to_f32 / from_f32: the storage in format D, widened or narrowed.
template <DType D>
void storage_to_f32(float* dst, const half_t* src, int64_t n) {
  half_to_f32(D, dst, src, n);
}
template <DType D>
void storage_from_f32(half_t* dst, const float* src, int64_t n) {
  f32_to_half(D, dst, src, n);
}

template <DType D>
void half_layernorm_forward(half_t* out, float* mean, float* rstd, const half_t* inp, const half_t* weight,
                            const half_t* bias, int64_t N, int C) {
  half_rows<D>(N, cpu_kernels().layernorm_forward, HalfOut{out, C}, RowData<float>{mean, 1}, RowData<float>{rstd, 1},
               HalfIn{inp, C}, HalfWhole{weight, C}, HalfWhole{bias, C}, kChunkRows, C);
}

// dinp (half) += the input gradient: widened, accumulated by the fp32 kernel, rounded back.
template <DType D>
void half_layernorm_backward(half_t* dinp, float* dweight, float* dbias, const half_t* dout, const half_t* inp,
                             const half_t* weight, const float* mean, const float* rstd, int64_t N, int C) {
  half_rows<D>(N, cpu_kernels().layernorm_backward, HalfInOut{dinp, dinp, C}, RowData<float>{dweight, 0},
               RowData<float>{dbias, 0}, HalfIn{dout, C}, HalfIn{inp, C}, HalfWhole{weight, C},
               RowData<const float>{mean, 1}, RowData<const float>{rstd, 1}, kChunkRows, C);
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
  half_rows<D>(N, cpu_kernels().crossentropy_forward, RowData<float>{losses, 1}, RowData<float>{stats, 2},
               HalfIn{logits, Vp}, RowData<const int32_t>{targets, 1}, kChunkRows, V, Vp);
}

template <DType D>
void half_crossentropy_backward(half_t* dlogits, const half_t* logits, const float* stats, const int32_t* targets,
                                float dloss, int64_t N, int V, int Vp) {
  const KernelTable& k = cpu_kernels();
  auto in_place = [&](float* l, const float* st, const int32_t* tg, int64_t n) {  // in place in fp32
    k.crossentropy_backward(l, l, st, tg, dloss, n, V, Vp);
  };
  half_rows<D>(N, in_place, HalfInOut{logits, dlogits, Vp}, RowData<const float>{stats, 2},
               RowData<const int32_t>{targets, 1}, kChunkRows);
}

// Groups are independent in the fp32 kernel, so chunks of whole groups change no bit.
template <DType D>
void half_fake_quant(half_t* x, int64_t n, int64_t groups, int bits, bool symmetric) {
  ZT_CHECK(groups > 0 && n % groups == 0, "fake_quant: %lld elements do not split into %lld groups",
           static_cast<long long>(n), static_cast<long long>(groups));
  const int64_t w = n / groups;
  auto groups_of = [&](float* v, int64_t g) { fake_quant(v, g * w, g, bits, symmetric); };
  half_rows<D>(groups, groups_of, HalfInOut{x, x, w}, kChunkRows);
}

}  // namespace

void fill_half_elementwise_ops(ActivationOps<half_t>* ops) {
  ops->layernorm_forward = ZT_HALF_PICK(ops, half_layernorm_forward);
  ops->layernorm_backward = ZT_HALF_PICK(ops, half_layernorm_backward);
  ops->gelu_forward = ZT_HALF_PICK(ops, half_gelu_forward);
  ops->gelu_backward = ZT_HALF_PICK(ops, half_gelu_backward);
  ops->crossentropy_forward = ZT_HALF_PICK(ops, half_crossentropy_forward);
  ops->crossentropy_backward = ZT_HALF_PICK(ops, half_crossentropy_backward);
  ops->fake_quant = ZT_HALF_PICK(ops, half_fake_quant);
  ops->to_f32 = ZT_HALF_PICK(ops, storage_to_f32);
  ops->from_f32 = ZT_HALF_PICK(ops, storage_from_f32);
}

}  // namespace zt
