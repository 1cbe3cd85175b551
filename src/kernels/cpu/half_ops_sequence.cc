// The half kernels over (B, T) sequences: attention one (batch, head) at a time on each
// thread, its slices widened into the thread's scratch and the fp32 head's kernel run on
// them (attention.h; the fp32 GEMMs' results do not depend on the operands' row stride);
// flash attention through the half_rows adapter with a batch element as the adapter's row
// (the fp32 kernel computes each (b, head) independently, so any chunk of batch elements
// gives the same bits); and the embedding
// one sequence at a time with positions as rows, so that the fp32 encoder sees positions
// t0 .. t0 + n - 1 as 0 .. n - 1 of a batch of one. The embedding backward keeps the
// fp32 kernel's order (rows in order per element of dwte and dwpe), so dwte and dwpe
// equal the whole-batch fp32 result bit for bit.
#include <array>
#include <cstdint>
#include <numeric>

#include "kernels/cpu/attention.h"
#include "kernels/cpu/flash_attention.h"
#include "kernels/cpu/encoder.h"
#include "kernels/cpu/half_ops_impl.h"
#include "kernels/cpu/half_rows.h"
#include "kernels/cpu/kernel_table.h"

namespace zt {

namespace {

// One head's slice of a (B, T, ...) activation: T rows of hs values, ld apart, widened into
// a dense T x hs block, or a dense block narrowed back into the slice. bf16 takes the kernel
// table's strided casts (one call a slice: a cast call per row of 64 values cost more than
// the conversion), f16 the cast a row.
template <DType D>
void widen_head(float* dst, const half_t* src, int T, int hs, int64_t ld) {
  if constexpr (D == DType::kBF16) {
    cpu_kernels().widen_bf16_rows(dst, hs, bits_of(src), ld, T, hs);
  } else {
    for (int t = 0; t < T; ++t) half_to_f32(D, dst + int64_t{t} * hs, src + t * ld, hs);
  }
}
template <DType D>
void narrow_head(half_t* dst, int64_t ld, const float* src, int T, int hs) {
  if constexpr (D == DType::kBF16) {
    cpu_kernels().narrow_bf16_rows(bits_of(dst), ld, src, hs, T, hs);
  } else {
    for (int t = 0; t < T; ++t) f32_to_half(D, dst + t * ld, src + int64_t{t} * hs, hs);
  }
}

// Each (batch, head) on its thread: q, k and v widened into the thread's scratch (dense, so
// the head's work stays in its cache), the fp32 head (attention.h) run on them, P and the
// output narrowed once. P is used in fp32 by the head and rounded only when saved.
template <DType D>
void half_attention_forward(half_t* atty, half_t* att, const half_t* qkv, int B, int T, int C, int NH) {
  const int hs = C / NH, C3 = 3 * C;
  const int64_t block = int64_t{T} * hs;
#pragma omp parallel
  {
    float* q = half_scratch(0, static_cast<size_t>(4 * block + int64_t{T} * T));
    float *k = q + block, *v = k + block, *out = v + block, *P = out + block;
#pragma omp for schedule(static)
    for (int bh = 0; bh < B * NH; ++bh) {
      const int b = bh / NH, h = bh % NH;
      const half_t* src = qkv + int64_t{b} * T * C3 + h * hs;
      widen_head<D>(q, src, T, hs, C3);
      widen_head<D>(k, src + C, T, hs, C3);
      widen_head<D>(v, src + 2 * C, T, hs, C3);
      attention_head_forward(out, hs, P, q, k, v, hs, T, hs);
      f32_to_half(D, att + int64_t{bh} * T * T, P, int64_t{T} * T);
      narrow_head<D>(atty + int64_t{b} * T * C + h * hs, C, out, T, hs);
    }
  }
}

// As the forward: each head's inputs widened (the saved P from its 16-bit copy), the fp32
// head's backward, its three gradients narrowed into dqkv.
template <DType D>
void half_attention_backward(half_t* dqkv, const half_t* datty, const half_t* qkv, const half_t* att, int B, int T,
                             int C, int NH) {
  const int hs = C / NH, C3 = 3 * C;
  const int64_t block = int64_t{T} * hs, square = int64_t{T} * T;
#pragma omp parallel
  {
    float* q = half_scratch(0, static_cast<size_t>(7 * block + 2 * square));
    float *k = q + block, *v = k + block, *dout = v + block, *dq = dout + block, *dk = dq + block, *dv = dk + block;
    float *P = dv + block, *dP = P + square;
#pragma omp for schedule(static)
    for (int bh = 0; bh < B * NH; ++bh) {
      const int b = bh / NH, h = bh % NH;
      const int64_t base = int64_t{b} * T * C3 + h * hs;
      widen_head<D>(q, qkv + base, T, hs, C3);
      widen_head<D>(k, qkv + base + C, T, hs, C3);
      widen_head<D>(v, qkv + base + 2 * C, T, hs, C3);
      widen_head<D>(dout, datty + int64_t{b} * T * C + h * hs, T, hs, C);
      half_to_f32(D, P, att + int64_t{bh} * square, square);
      attention_head_backward({dq, dk, dv, hs}, dP, dout, hs, q, k, v, hs, P, T, hs);
      narrow_head<D>(dqkv + base, C3, dq, T, hs);
      narrow_head<D>(dqkv + base + C, C3, dk, T, hs);
      narrow_head<D>(dqkv + base + 2 * C, C3, dv, T, hs);
    }
  }
}

// Flash attention per batch element, as the materialized pair: lse stays fp32.
template <DType D>
void half_flash_attention_forward(half_t* atty, float* lse, const half_t* qkv, int B, int T, int C, int NH) {
  const int64_t n_qkv = int64_t{T} * 3 * C, n_y = int64_t{T} * C;
  auto kernel = [&](float* y, float* l, const float* q, int64_t n) {
    flash_attention_forward(y, l, q, static_cast<int>(n), T, C, NH);
  };
  half_rows<D>(B, kernel, HalfOut{atty, n_y}, RowData<float>{lse, int64_t{NH} * T}, HalfIn{qkv, n_qkv}, kChunkRows);
}

template <DType D>
void half_flash_attention_backward(half_t* dqkv, const half_t* datty, const half_t* qkv, const half_t* atty,
                                   const float* lse, int B, int T, int C, int NH) {
  const int64_t n_qkv = int64_t{T} * 3 * C, n_y = int64_t{T} * C;
  auto kernel = [&](float* dq, const float* dy, const float* q, const float* y, const float* l, int64_t n) {
    flash_attention_backward(dq, dy, q, y, l, static_cast<int>(n), T, C, NH);
  };
  half_rows<D>(B, kernel, HalfOut{dqkv, n_qkv}, HalfIn{datty, n_y}, HalfIn{qkv, n_qkv}, HalfIn{atty, n_y},
               RowData<const float>{lse, int64_t{NH} * T}, kChunkRows);
}

// The row indices 0 .. kHalfChunkRows - 1: a chunk's tokens once its wte rows are gathered.
const int32_t* chunk_iota() {
  static const std::array<int32_t, kHalfChunkRows> iota = [] {
    std::array<int32_t, kHalfChunkRows> r;
    std::iota(r.begin(), r.end(), 0);
    return r;
  }();
  return iota.data();
}

template <DType D>
void half_encoder_forward(half_t* out, const int32_t* tokens, const half_t* wte, const half_t* wpe, int B, int T,
                          int C) {
  auto kernel = [&](float* y, const float* e, const float* p, int64_t n) {
    encoder_forward(y, chunk_iota(), e, p, 1, static_cast<int>(n), C);
  };
  for (int b = 0; b < B; ++b) {
    const int64_t row = int64_t{b} * T;
    half_rows_independent<D>(T, kernel, HalfOut{out + row * C, C}, HalfGather{wte, tokens + row, C}, HalfIn{wpe, C},
                             kChunkRows);
  }
}

template <DType D>
void half_encoder_backward(float* dwte, float* dwpe, const half_t* dout, const int32_t* tokens, int B, int T, int C) {
  auto kernel = [&](const float* d, const int32_t* tok, float* dwpe_rows, int64_t n) {
    encoder_backward(dwte, dwpe_rows, d, tok, 1, static_cast<int>(n), C);
  };
  for (int b = 0; b < B; ++b) {
    const int64_t row = int64_t{b} * T;
    half_rows<D>(T, kernel, HalfIn{dout + row * C, C}, RowData<const int32_t>{tokens + row, 1}, RowData<float>{dwpe, C},
                 kChunkRows);
  }
}

}  // namespace

void fill_half_sequence_ops(ActivationOps<half_t>* ops) {
  ops->attention_forward = ZT_HALF_PICK(ops, half_attention_forward);
  ops->attention_backward = ZT_HALF_PICK(ops, half_attention_backward);
  ops->flash_attention_forward = ZT_HALF_PICK(ops, half_flash_attention_forward);
  ops->flash_attention_backward = ZT_HALF_PICK(ops, half_flash_attention_backward);
  ops->encoder_forward = ZT_HALF_PICK(ops, half_encoder_forward);
  ops->encoder_backward = ZT_HALF_PICK(ops, half_encoder_backward);
}

}  // namespace zt
