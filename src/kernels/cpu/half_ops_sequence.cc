// The half kernels over (B, T) sequences: attention one batch element at a time (the
// fp32 kernel computes each (b, head) independently, so a batch of one gives the same
// bits), and the embedding in row chunks that never cross a sequence, so that the fp32
// encoder sees positions t0 .. t0 + n - 1 as 0 .. n - 1 of a batch of one. The
// embedding backward keeps the fp32 kernel's order (rows in order per element of dwte
// and dwpe), so dwte and dwpe equal the whole-batch fp32 result bit for bit.
#include <array>
#include <cstdint>
#include <numeric>

#include "kernels/cpu/attention.h"
#include "kernels/cpu/encoder.h"
#include "kernels/cpu/half_ops_impl.h"

namespace zt {

namespace {

template <DType D>
void half_attention_forward(half_t* atty, half_t* att, const half_t* qkv, int B, int T, int C, int NH) {
  const int64_t n_qkv = static_cast<int64_t>(T) * 3 * C, n_y = static_cast<int64_t>(T) * C;
  const int64_t n_att = static_cast<int64_t>(NH) * T * T;
  float* q = half_scratch(0, n_qkv);
  float* y = half_scratch(1, n_y);
  float* p = half_scratch(2, n_att);
  for (int b = 0; b < B; ++b) {
    half_to_f32(D, q, qkv + b * n_qkv, n_qkv);
    attention_forward(y, p, q, 1, T, C, NH);
    f32_to_half(D, atty + b * n_y, y, n_y);
    f32_to_half(D, att + b * n_att, p, n_att);
  }
}

template <DType D>
void half_attention_backward(half_t* dqkv, const half_t* datty, const half_t* qkv, const half_t* att, int B, int T,
                        int C, int NH) {
  const int64_t n_qkv = static_cast<int64_t>(T) * 3 * C, n_y = static_cast<int64_t>(T) * C;
  const int64_t n_att = static_cast<int64_t>(NH) * T * T;
  float* dq = half_scratch(0, n_qkv);
  float* dy = half_scratch(1, n_y);
  float* p = half_scratch(2, n_att);
  float* q = half_scratch(3, n_qkv);
  for (int b = 0; b < B; ++b) {
    half_to_f32(D, dy, datty + b * n_y, n_y);
    half_to_f32(D, q, qkv + b * n_qkv, n_qkv);
    half_to_f32(D, p, att + b * n_att, n_att);
    attention_backward(dq, dy, q, p, 1, T, C, NH);
    f32_to_half(D, dqkv + b * n_qkv, dq, n_qkv);
  }
}

// Calls f(row, t0, n) for chunks of n <= rows positions t0 .. t0 + n - 1 of each sequence;
// row = b T + t0 is the chunk's first row.
template <typename F>
void for_each_sequence_chunk(int B, int T, int64_t rows, F&& f) {
  for (int b = 0; b < B; ++b) {
    for_each_chunk(T, rows, [&](int64_t t0, int64_t n) { f(static_cast<int64_t>(b) * T + t0, t0, n); });
  }
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
  const int64_t rows = half_chunk_rows(3 * static_cast<int64_t>(C));
  float* e = half_scratch(0, static_cast<size_t>(rows) * C);
  float* p = half_scratch(1, static_cast<size_t>(rows) * C);
  float* y = half_scratch(2, static_cast<size_t>(rows) * C);
  for_each_sequence_chunk(B, T, rows, [&](int64_t row, int64_t t0, int64_t n) {
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; ++i) half_to_f32(D, e + i * C, wte + static_cast<int64_t>(tokens[row + i]) * C, C);
    if (wpe != nullptr) half_to_f32(D, p, wpe + t0 * C, n * C);
    encoder_forward(y, chunk_iota(), e, wpe == nullptr ? nullptr : p, 1, static_cast<int>(n), C);
    f32_to_half(D, out + row * C, y, n * C);
  });
}

template <DType D>
void half_encoder_backward(float* dwte, float* dwpe, const half_t* dout, const int32_t* tokens, int B, int T, int C) {
  const int64_t rows = half_chunk_rows(C);
  float* d = half_scratch(0, static_cast<size_t>(rows) * C);
  for_each_sequence_chunk(B, T, rows, [&](int64_t row, int64_t t0, int64_t n) {
    half_to_f32(D, d, dout + row * C, n * C);
    encoder_backward(dwte, dwpe == nullptr ? nullptr : dwpe + t0 * C, d, tokens + row, 1, static_cast<int>(n), C);
  });
}

}  // namespace

void fill_half_sequence_ops(ActivationOps<half_t>* ops) {
  ops->attention_forward = ZT_HALF_PICK(ops, half_attention_forward);
  ops->attention_backward = ZT_HALF_PICK(ops, half_attention_backward);
  ops->encoder_forward = ZT_HALF_PICK(ops, half_encoder_forward);
  ops->encoder_backward = ZT_HALF_PICK(ops, half_encoder_backward);
}

}  // namespace zt
