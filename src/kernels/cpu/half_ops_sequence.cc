// The half kernels over (B, T) sequences, through the half_rows adapter: attention with a
// batch element as the adapter's row (the fp32 kernel computes each (b, head)
// independently, so any chunk of batch elements gives the same bits), and the embedding
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

namespace zt {

namespace {

template <DType D>
void half_attention_forward(half_t* atty, half_t* att, const half_t* qkv, int B, int T, int C, int NH) {
  const int64_t n_qkv = int64_t{T} * 3 * C, n_y = int64_t{T} * C, n_att = int64_t{NH} * T * T;
  auto kernel = [&](float* y, float* p, const float* q, int64_t n) {
    attention_forward(y, p, q, static_cast<int>(n), T, C, NH);
  };
  half_rows<D>(B, kernel, HalfOut{atty, n_y}, HalfOut{att, n_att}, HalfIn{qkv, n_qkv}, kChunkRows);
}

template <DType D>
void half_attention_backward(half_t* dqkv, const half_t* datty, const half_t* qkv, const half_t* att, int B, int T,
                             int C, int NH) {
  const int64_t n_qkv = int64_t{T} * 3 * C, n_y = int64_t{T} * C, n_att = int64_t{NH} * T * T;
  auto kernel = [&](float* dq, const float* dy, const float* q, const float* p, int64_t n) {
    attention_backward(dq, dy, q, p, static_cast<int>(n), T, C, NH);
  };
  half_rows<D>(B, kernel, HalfOut{dqkv, n_qkv}, HalfIn{datty, n_y}, HalfIn{qkv, n_qkv}, HalfIn{att, n_att},
               kChunkRows);
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
