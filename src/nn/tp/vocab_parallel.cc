// Vocabulary-parallel embedding and cross-entropy: kernel-table calls around the
// collectives.
#include "nn/tp/vocab_parallel.h"

#include <vector>

namespace zt {

Status vocab_parallel_embedding_forward(const KernelOps& k, ProcessGroup* tp, float* out, const int32_t* tokens,
                                        const float* wte_l, const float* wpe, int B, int T, int C,
                                        const VocabSlice& v) {
  const int64_t rows = static_cast<int64_t>(B) * T;
  k.vocab_embedding_rows(out, tokens, wte_l, rows, C, v);
  if (tp != nullptr && tp->size() > 1) {
    ZT_RETURN_IF_ERROR(tp->all_reduce(out, static_cast<size_t>(rows) * C, CommDType::kF32)->wait());
  }
  k.add_positions(out, wpe, rows, T, C);
  return Status::OK();
}

Status vocab_parallel_xent_forward(const KernelOps& k, ProcessGroup* tp, float* losses, float* stats,
                                   float* row_max_all, float* row_sums, const float* logits_l, const int32_t* targets,
                                   int64_t N, const VocabSlice& v) {
  const int P = tp == nullptr ? 1 : tp->size(), r = tp == nullptr ? 0 : tp->rank();
  k.vocab_xent_row_max(row_max_all + static_cast<int64_t>(r) * N, logits_l, N, v);
  if (P > 1) ZT_RETURN_IF_ERROR(tp->all_gather(row_max_all, std::vector<size_t>(static_cast<size_t>(P), N))->wait());
  k.vocab_xent_partials(stats, row_sums, row_max_all, P, logits_l, targets, N, v);
  if (P > 1) ZT_RETURN_IF_ERROR(tp->all_reduce(row_sums, static_cast<size_t>(2 * N), CommDType::kF32)->wait());
  k.vocab_xent_finish(losses, stats, row_sums, targets, N);
  return Status::OK();
}

}  // namespace zt
