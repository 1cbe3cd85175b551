// The tensor-parallel halves of the 16-bit tables (ActivationOps<half_t>): the
// vocabulary-parallel embedding and cross-entropy around nn/tp's collectives, and the
// row-parallel layers' epilogue (their fp32 partial products are in half_ops_linear.cc).
// As everywhere in the half tables, through the one adapter (half_rows.h): widen a chunk, run
// the fp32 kernel (vocab_parallel_kernels.h, elementwise.h), round each 16-bit output once.
// The one exception is the embedding gather, which is a cast: each row of the local
// vocabulary is widened straight into the fp32 partial (zero outside the slice). What crosses
// ranks (partial rows, row maxima and sums) is fp32. Row chunks keep every row's
// arithmetic, so chunking changes no bit.
#include <cstdint>

#include "kernels/cpu/elementwise.h"
#include "kernels/cpu/half_ops_impl.h"
#include "kernels/cpu/half_rows.h"
#include "kernels/cpu/vocab_parallel_kernels.h"

namespace zt {

namespace {

template <DType D>
void half_vocab_embedding_rows(float* partial, const int32_t* tokens, const half_t* wte_l, int64_t rows, int C,
                               const VocabSlice& v) {
#pragma omp parallel for schedule(static)
  for (int64_t bt = 0; bt < rows; ++bt) {
    float* o = partial + bt * C;
    const int32_t local = tokens[bt] - v.vstart;
    if (local >= 0 && local < v.Vl) {
      half_to_f32(D, o, wte_l + static_cast<int64_t>(local) * C, C);
    } else {
      for (int c = 0; c < C; ++c) o[c] = 0.0f;
    }
  }
}

// Row i of a chunk gets its position's row of wpe at i, so the fp32 kernel runs with T = n.
template <DType D>
void half_embedding_finish(half_t* out, const float* summed, const half_t* wpe, int64_t rows, int T, int C) {
  auto kernel = [&](float* y, const float* s, const float* p, int64_t n) {
    embedding_finish(y, s, p, n, static_cast<int>(n), C);
  };
  half_rows_independent<D>(rows, kernel, HalfOut{out, C}, RowData<const float>{summed, C}, HalfCycle{wpe, T, C},
                           kChunkRows);
}

// One sequence at a time, positions as rows (dwpe's row t0 + i for row i of a chunk).
template <DType D>
void half_vocab_embedding_backward(float* dwte_l, float* dwpe, const half_t* dout, const int32_t* tokens, int B, int T,
                                   int C, const VocabSlice& v) {
  auto kernel = [&](const float* d, const int32_t* tok, float* dwpe_rows, int64_t n) {
    vocab_embedding_backward(dwte_l, dwpe_rows, d, tok, 1, static_cast<int>(n), C, v);
  };
  for (int b = 0; b < B; ++b) {
    const int64_t row = int64_t{b} * T;
    half_rows<D>(T, kernel, HalfIn{dout + row * C, C}, RowData<const int32_t>{tokens + row, 1}, RowData<float>{dwpe, C},
                 kChunkRows);
  }
}

template <DType D>
void half_vocab_xent_row_max(float* row_max, const half_t* logits_l, int64_t N, const VocabSlice& v) {
  half_rows_independent<D>(N, vocab_xent_row_max, RowData<float>{row_max, 1}, HalfIn{logits_l, v.Vl}, kChunkRows, v);
}

// Every rank's maxima are (P, N): the chunk's columns of them, (P, n).
template <DType D>
void half_vocab_xent_partials(float* stats, float* row_sums, const float* row_max_all, int P, const half_t* logits_l,
                              const int32_t* targets, int64_t N, const VocabSlice& v) {
  half_rows_independent<D>(N, vocab_xent_partials, RowData<float>{stats, 2}, RowData<float>{row_sums, 2},
                           ColumnsOf{row_max_all, N, P}, P, HalfIn{logits_l, v.Vl}, RowData<const int32_t>{targets, 1},
                           kChunkRows, v);
}

template <DType D>
void half_vocab_xent_backward(half_t* dlogits_l, const half_t* logits_l, const float* stats, const int32_t* targets,
                              float dloss, int64_t N, const VocabSlice& v) {
  auto in_place = [&](float* l, const float* st, const int32_t* tg, int64_t n) {  // in place in fp32
    vocab_xent_backward(l, l, st, tg, dloss, n, v);
  };
  half_rows_independent<D>(N, in_place, HalfInOut{logits_l, dlogits_l, v.Vl}, RowData<const float>{stats, 2},
                           RowData<const int32_t>{targets, 1}, kChunkRows);
}

template <DType D>
void half_bias_residual(half_t* out, const half_t* residual, const float* partial, const half_t* bias, int64_t N,
                        int C) {
  auto in_place = [&](float* r, const float* part, const float* b, int64_t n) {  // in place in fp32
    bias_residual(r, r, part, b, n, C);
  };
  half_rows_independent<D>(N, in_place, HalfInOut{residual, out, C}, RowData<const float>{partial, C},
                           HalfWhole{bias, C}, kChunkRows);
}

}  // namespace

void fill_half_tp_ops(ActivationOps<half_t>* ops) {
  ops->vocab_embedding_rows = ZT_HALF_PICK(ops, half_vocab_embedding_rows);
  ops->embedding_finish = ZT_HALF_PICK(ops, half_embedding_finish);
  ops->vocab_embedding_backward = ZT_HALF_PICK(ops, half_vocab_embedding_backward);
  ops->vocab_xent_row_max = ZT_HALF_PICK(ops, half_vocab_xent_row_max);
  ops->vocab_xent_partials = ZT_HALF_PICK(ops, half_vocab_xent_partials);
  ops->vocab_xent_backward = ZT_HALF_PICK(ops, half_vocab_xent_backward);
  ops->bias_residual = ZT_HALF_PICK(ops, half_bias_residual);
}

}  // namespace zt
