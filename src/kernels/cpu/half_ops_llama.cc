// The half kernels of the Llama layers (RMSNorm, RoPE, SwiGLU; the GQA packing is gqa.cc), as half_ops_elementwise.cc
// does LayerNorm and GELU: widen a chunk, run the fp32 kernel (cpu_kernels() for RMSNorm
// and SwiGLU, rope.h for RoPE), round the chunk's outputs once; bf16 RMSNorm is the
// table's bf16 form instead (widening in registers, the same bits). RMSNorm rows are
// independent and its dweight sums rows in row order; RoPE chunks never cross a sequence
// (a chunk of positions t0 .. t0 + n - 1 of sequence b is the fp32 kernel on a batch of
// one at pos0 + t0); SwiGLU is elementwise. So chunking changes no bit of any result.
// Outputs may alias inputs chunk for chunk (a chunk is widened before it is written).
#include <cstdint>

#include "kernels/cpu/half_ops_impl.h"
#include "kernels/cpu/half_rows.h"
#include "kernels/cpu/gqa.h"
#include "kernels/cpu/kernel_table.h"
#include "kernels/cpu/rope.h"

namespace zt {

namespace {

// bf16 takes the table's bf16 RMSNorm (the fp32 arithmetic on values widened in registers).
template <DType D>
void half_rmsnorm_forward(half_t* out, float* rstd, const half_t* inp, const half_t* weight, int64_t N, int C,
                          float eps) {
  if constexpr (D == DType::kBF16) {
    cpu_kernels().rmsnorm_forward_bf16(bits_of(out), rstd, bits_of(inp), bits_of(weight), N, C, eps);
    return;
  }
  half_rows_independent<D>(N, cpu_kernels().rmsnorm_forward, HalfOut{out, C}, RowData<float>{rstd, 1}, HalfIn{inp, C},
                           HalfWhole{weight, C}, kChunkRows, C, eps);
}

// dinp (half) += the input gradient: widened, accumulated by the fp32 kernel, rounded back.
template <DType D>
void half_rmsnorm_backward(half_t* dinp, float* dweight, const half_t* dout, const half_t* inp, const half_t* weight,
                           const float* rstd, int64_t N, int C) {
  if constexpr (D == DType::kBF16) {
    cpu_kernels().rmsnorm_backward_bf16(bits_of(dinp), dweight, bits_of(dout), bits_of(inp), bits_of(weight), rstd,
                                        N, C);
    return;
  }
  half_rows<D>(HalfMaxRows{kHalfSumChunkRows}, N, cpu_kernels().rmsnorm_backward, HalfInOut{dinp, dinp, C},
               RowData<float>{dweight, 0}, HalfIn{dout, C}, HalfIn{inp, C}, HalfWhole{weight, C},
               RowData<const float>{rstd, 1}, kChunkRows, C);
}

// The fp32 rotation (forward, or backward when inverse) in place, one sequence at a time
// with its positions as rows: chunk t0 .. t0 + n - 1 rotates by positions pos0 + t0 on.
template <DType D>
void half_rope(half_t* out, const half_t* inp, const float* freqs, int B, int T, int NH, int HD, int pos0,
               bool inverse) {
  const int64_t width = static_cast<int64_t>(NH) * HD;
  auto kernel = [&](float* x, int64_t t0, int64_t n) {
    const int p = pos0 + static_cast<int>(t0);
    if (inverse) {
      rope_backward(x, x, freqs, 1, static_cast<int>(n), NH, HD, p);
    } else {
      rope_forward(x, x, freqs, 1, static_cast<int>(n), NH, HD, p);
    }
  };
  for (int b = 0; b < B; ++b) {
    const int64_t off = int64_t{b} * T * width;
    half_rows_independent<D>(T, kernel, HalfInOut{inp + off, out + off, width}, kChunkFirst, kChunkRows);
  }
}

template <DType D>
void half_rope_forward(half_t* out, const half_t* inp, const float* freqs, int B, int T, int NH, int HD, int pos0) {
  half_rope<D>(out, inp, freqs, B, T, NH, HD, pos0, false);
}

template <DType D>
void half_rope_backward(half_t* dinp, const half_t* dout, const float* freqs, int B, int T, int NH, int HD,
                        int pos0) {
  half_rope<D>(dinp, dout, freqs, B, T, NH, HD, pos0, true);
}

template <DType D>
void half_swiglu_forward(half_t* out, const half_t* gate, const half_t* up, int64_t count) {
  const KernelTable& k = cpu_kernels();
  half_flat<D, 2, 1>(count, {gate, up}, {{{out, 0}}},
                     [&](const auto& x, int64_t n) { k.swiglu_forward(x[0], x[0], x[1], n); });
}

template <DType D>
void half_swiglu_backward(half_t* dgate, half_t* dup, const half_t* dout, const half_t* gate, const half_t* up,
                          int64_t count) {
  const KernelTable& k = cpu_kernels();
  // In place in fp32: dgate over gate (slot 1), dup over up (slot 2).
  half_flat<D, 3, 2>(count, {dout, gate, up}, {{{dgate, 1}, {dup, 2}}},
                     [&](const auto& x, int64_t n) { k.swiglu_backward(x[1], x[2], x[0], x[1], x[2], n); });
}

}  // namespace

void fill_half_llama_ops(ActivationOps<half_t>* ops) {
  ops->rmsnorm_forward = ZT_HALF_PICK(ops, half_rmsnorm_forward);
  ops->rmsnorm_backward = ZT_HALF_PICK(ops, half_rmsnorm_backward);
  ops->rope_forward = ZT_HALF_PICK(ops, half_rope_forward);
  ops->rope_backward = ZT_HALF_PICK(ops, half_rope_backward);
  ops->swiglu_forward = ZT_HALF_PICK(ops, half_swiglu_forward);
  ops->swiglu_backward = ZT_HALF_PICK(ops, half_swiglu_backward);
  ops->gqa_pack = ZT_HALF_PICK(ops, half_gqa_pack);
  ops->gqa_unpack = ZT_HALF_PICK(ops, half_gqa_unpack);
}

}  // namespace zt
