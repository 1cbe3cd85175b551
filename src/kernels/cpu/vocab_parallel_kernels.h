// The local halves of the vocabulary-parallel embedding and cross-entropy (the
// collectives between them are issued by nn/tp/vocab_parallel.cc). Row loops run with
// OpenMP; every reduction is in fixed order, independent of the thread count.
#pragma once

#include <cstdint>

#include "kernels/kernel_args.h"

namespace zt {

void vocab_embedding_rows(float* out, const int32_t* tokens, const float* wte_l, int64_t rows, int C,
                          const VocabSlice& v);
// out (rows, C) = summed + wpe[row % T] (out may alias summed).
void embedding_finish(float* out, const float* summed, const float* wpe, int64_t rows, int T, int C);
void vocab_embedding_backward(float* dwte_l, float* dwpe, const float* dout, const int32_t* tokens, int B, int T, int C,
                              const VocabSlice& v);
void vocab_xent_row_max(float* row_max, const float* logits_l, int64_t N, const VocabSlice& v);
void vocab_xent_partials(float* stats, float* row_sums, const float* row_max_all, int P, const float* logits_l,
                         const int32_t* targets, int64_t N, const VocabSlice& v);
void vocab_xent_finish(float* losses, float* stats, const float* row_sums, const int32_t* targets, int64_t N);
void vocab_xent_backward(float* dlogits_l, const float* logits_l, const float* stats, const int32_t* targets,
                         float dloss, int64_t N, const VocabSlice& v);

}  // namespace zt
