// Vocabulary-parallel embedding and cross-entropy (Megatron's VocabParallelEmbedding and
// vocab_parallel_cross_entropy): each tensor-parallel rank holds rows [vstart, vstart+Vl)
// of wte. Columns at or beyond the real vocabulary V (padding) never take part.
//   embedding: partial rows (zero for tokens outside the slice) all-reduced, plus wpe.
//   cross-entropy: the row max is the max of every rank's max (all-gathered), the sum of
//   exponentials and the target's logit are all-reduced; each rank's logits gradient is
//   its slice of softmax - onehot. Three small collectives per forward, none in backward,
//   so the backward halves are plain kernel-table calls (vocab_embedding_backward,
//   vocab_xent_backward).
#pragma once

#include <cstdint>

#include "kernels/kernel_ops.h"
#include "comm/process_group.h"
#include "core/status.h"

namespace zt {

// out (B, T, C) = sum over ranks of wte rows in the slice + wpe[t], the sum in fp32 in
// `partial` (B, T, C floats). tokens must be in [0, V). A: float or half_t.
template <typename A>
Status vocab_parallel_embedding_forward(const ActivationOps<A>& k, ProcessGroup* tp, A* out, float* partial,
                                        const int32_t* tokens, const A* wte_l, const A* wpe, int B, int T, int C,
                                        const VocabSlice& v);

// losses (N): logsumexp - target logit (0 for ignored rows); stats (N, 2) = [max, log sum]
// saved for the backward; row_max_all (tp, N) and row_sums (N, 2) are scratch. `finish`
// is the f32 table's vocab_xent_finish.
template <typename A>
Status vocab_parallel_xent_forward(const ActivationOps<A>& k, const KernelOps& f32, ProcessGroup* tp, float* losses,
                                   float* stats, float* row_max_all, float* row_sums, const A* logits_l,
                                   const int32_t* targets, int64_t N, const VocabSlice& v);

}  // namespace zt
