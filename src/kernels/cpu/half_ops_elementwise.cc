// The row-wise and elementwise half kernels (LayerNorm, GELU, cross-entropy), the casts
// and AdamW's step with the compute copy: each is the half_rows or half_flat adapter over the ISA-dispatched fp32 kernel
// from cpu_kernels() (widen a chunk, run it, round the chunk's outputs once), or for
// cross-entropy the fp32 kernel's row pieces on one widened row per thread; bf16 takes the
// table's bf16 forms of the fp32 kernels instead for GELU, LayerNorm, cross-entropy and
// AdamW's copy (widening in registers, or for GELU in the stack). Rows are
// independent in every fp32 kernel here and the LayerNorm parameter gradients sum rows in
// row order, so chunking changes no bit of any result.
// Outputs may alias inputs chunk for chunk (gelu_backward's dinp = dout,
// crossentropy_backward's dlogits = logits): a chunk is widened before it is written.
#include <cmath>
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

// One thread's narrowing of a chunk (f32_to_half runs on the calling thread inside a
// parallel region), and the step that writes the compute copy through it.
template <DType D>
void narrow_chunk(uint16_t* dst, const float* src, int64_t n) {
  f32_to_half(D, reinterpret_cast<half_t*>(dst), src, n);
}
template <DType D>
void half_adamw_step_copy(half_t* dst, float* p, const float* g, float* m, float* v, int64_t n, const AdamWArgs& a) {
  if constexpr (D == DType::kBF16) {
    cpu_kernels().adamw_step_bf16(p, g, m, v, n, a, bits_of(dst));
  } else {
    cpu_kernels().adamw_step_narrow(p, g, m, v, n, a, bits_of(dst), &narrow_chunk<D>);
  }
}

// bf16 takes the table's bf16 LayerNorm (the fp32 arithmetic on values widened in registers).
template <DType D>
void half_layernorm_forward(half_t* out, float* mean, float* rstd, const half_t* inp, const half_t* weight,
                            const half_t* bias, int64_t N, int C) {
  if constexpr (D == DType::kBF16) {
    cpu_kernels().layernorm_forward_bf16(bits_of(out), mean, rstd, bits_of(inp), bits_of(weight), bits_of(bias), N, C);
    return;
  }
  half_rows_independent<D>(N, cpu_kernels().layernorm_forward, HalfOut{out, C}, RowData<float>{mean, 1},
                           RowData<float>{rstd, 1}, HalfIn{inp, C}, HalfWhole{weight, C}, HalfWhole{bias, C},
                           kChunkRows, C);
}

// dinp (half) += the input gradient: widened, accumulated by the fp32 kernel, rounded back.
template <DType D>
void half_layernorm_backward(half_t* dinp, float* dweight, float* dbias, const half_t* dout, const half_t* inp,
                             const half_t* weight, const float* mean, const float* rstd, int64_t N, int C) {
  if constexpr (D == DType::kBF16) {
    cpu_kernels().layernorm_backward_bf16(bits_of(dinp), dweight, dbias, bits_of(dout), bits_of(inp), bits_of(weight),
                                          mean, rstd, N, C);
    return;
  }
  half_rows<D>(HalfMaxRows{kHalfSumChunkRows}, N, cpu_kernels().layernorm_backward, HalfInOut{dinp, dinp, C},
               RowData<float>{dweight, 0}, RowData<float>{dbias, 0}, HalfIn{dout, C}, HalfIn{inp, C},
               HalfWhole{weight, C}, RowData<const float>{mean, 1}, RowData<const float>{rstd, 1}, kChunkRows, C);
}

// bf16 takes the table's bf16 GELU (the fp32 arithmetic on chunks widened in the stack).
template <DType D>
void half_gelu_forward(half_t* out, const half_t* inp, int64_t count) {
  const KernelTable& k = cpu_kernels();
  if constexpr (D == DType::kBF16) {
    k.gelu_forward_bf16(bits_of(out), bits_of(inp), count);
  } else {
    half_flat<D, 1, 1>(count, {inp}, {{{out, 0}}}, [&](const auto& x, int64_t n) { k.gelu_forward(x[0], x[0], n); });
  }
}

template <DType D>
void half_gelu_backward(half_t* dinp, const half_t* inp, const half_t* dout, int64_t count) {
  const KernelTable& k = cpu_kernels();
  if constexpr (D == DType::kBF16) {
    k.gelu_backward_bf16(bits_of(dinp), bits_of(inp), bits_of(dout), count);
  } else {
    half_flat<D, 2, 1>(count, {inp, dout}, {{{dinp, 1}}},
                       [&](const auto& x, int64_t n) { k.gelu_backward(x[1], x[0], x[1], n); });
  }
}

// Cross-entropy over f16 logits (bf16 takes the table's bf16 form, widening in registers),
// a row per thread at a time: the thread widens the row
// into its scratch (Vp floats, in its cache) and runs the fp32 kernel's row pieces, which
// are crossentropy_forward / crossentropy_backward's per-row arithmetic operation for
// operation (row_max and row_sum_exp over the V real classes, log in double, the loss; the
// probabilities times dloss, the target's dloss off, zero padding), so the same bits with
// one pass over the 16-bit logits and no parallel loop started per row.
//
// widened_rows: f(r, x) for every row r, on all threads; x is the thread's scratch of Vp
// floats, holding row r's first V logits widened unless the row's target is ignored.
template <DType D, typename F>
void widened_rows(const half_t* logits, const int32_t* targets, int64_t N, int V, int Vp, F&& f) {
#pragma omp parallel
  {
    float* x = half_scratch(0, static_cast<size_t>(Vp));
#pragma omp for schedule(static)
    for (int64_t r = 0; r < N; ++r) {
      if (targets[r] >= 0) half_to_f32(D, x, logits + r * Vp, V);
      f(r, x);
    }
  }
}

template <DType D>
void half_crossentropy_forward(float* losses, float* stats, const half_t* logits, const int32_t* targets, int64_t N,
                               int V, int Vp) {
  const KernelTable& k = cpu_kernels();
  if constexpr (D == DType::kBF16) {
    k.crossentropy_forward_bf16(losses, stats, bits_of(logits), targets, N, V, Vp);
    return;
  }
  widened_rows<D>(logits, targets, N, V, Vp, [&](int64_t r, const float* x) {
    const int32_t t = targets[r];
    if (t < 0) {
      losses[r] = stats[2 * r] = stats[2 * r + 1] = 0.0f;
      return;
    }
    const float m = k.row_max(x, V);
    const float logsum = static_cast<float>(std::log(static_cast<double>(k.row_sum_exp(x, V, m))));
    stats[2 * r] = m;
    stats[2 * r + 1] = logsum;
    losses[r] = (m - x[t]) + logsum;
  });
}

template <DType D>
void half_crossentropy_backward(half_t* dlogits, const half_t* logits, const float* stats, const int32_t* targets,
                                float dloss, int64_t N, int V, int Vp) {
  const KernelTable& k = cpu_kernels();
  if constexpr (D == DType::kBF16) {
    k.crossentropy_backward_bf16(bits_of(dlogits), bits_of(logits), stats, targets, dloss, N, V, Vp);
    return;
  }
  widened_rows<D>(logits, targets, N, V, Vp, [&](int64_t r, float* x) {
    const int32_t t = targets[r];
    if (t >= 0) {
      k.row_softmax_scaled(x, x, V, stats[2 * r], stats[2 * r + 1], dloss);
      x[t] -= dloss;
    }
    for (int j = t >= 0 ? V : 0; j < Vp; ++j) x[j] = 0.0f;
    f32_to_half(D, dlogits + r * Vp, x, Vp);
  });
}

// Groups are independent in the fp32 kernel, so chunks of whole groups change no bit.
template <DType D>
void half_fake_quant(half_t* x, int64_t n, int64_t groups, int bits, bool symmetric) {
  ZT_CHECK(groups > 0 && n % groups == 0, "fake_quant: %lld elements do not split into %lld groups",
           static_cast<long long>(n), static_cast<long long>(groups));
  const int64_t w = n / groups;
  auto groups_of = [&](float* v, int64_t g) { fake_quant(v, g * w, g, bits, symmetric); };
  half_rows_independent<D>(groups, groups_of, HalfInOut{x, x, w}, kChunkRows);
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
  ops->adamw_step_copy = ZT_HALF_PICK(ops, half_adamw_step_copy);
}

}  // namespace zt
