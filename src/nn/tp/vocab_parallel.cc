// Vocabulary-parallel embedding and cross-entropy: kernel-table calls around the
// collectives.
#include "nn/tp/vocab_parallel.h"

#include <vector>

namespace zt {

template <typename A>
Status vocab_parallel_embedding_forward(const ActivationOps<A>& k, ProcessGroup* tp, A* out, float* partial,
                                        const int32_t* tokens, const A* wte_l, const A* wpe, int B, int T, int C,
                                        const VocabSlice& v) {
  const int64_t rows = static_cast<int64_t>(B) * T;
  k.vocab_embedding_rows(partial, tokens, wte_l, rows, C, v);
  if (tp != nullptr && tp->size() > 1) {
    ZT_RETURN_IF_ERROR(tp->all_reduce(partial, static_cast<size_t>(rows) * C, CommDType::kF32)->wait());
  }
  k.embedding_finish(out, partial, wpe, rows, T, C);
  return Status::OK();
}

template <typename A>
Status vocab_parallel_xent_forward(const ActivationOps<A>& k, const KernelOps& f32, ProcessGroup* tp, float* losses,
                                   float* stats, float* row_max_all, float* row_sums, const A* logits_l,
                                   const int32_t* targets, int64_t N, const VocabSlice& v) {
  const int P = tp == nullptr ? 1 : tp->size(), r = tp == nullptr ? 0 : tp->rank();
  k.vocab_xent_row_max(row_max_all + static_cast<int64_t>(r) * N, logits_l, N, v);
  if (P > 1) ZT_RETURN_IF_ERROR(tp->all_gather(row_max_all, std::vector<size_t>(static_cast<size_t>(P), N))->wait());
  k.vocab_xent_partials(stats, row_sums, row_max_all, P, logits_l, targets, N, v);
  if (P > 1) ZT_RETURN_IF_ERROR(tp->all_reduce(row_sums, static_cast<size_t>(2 * N), CommDType::kF32)->wait());
  f32.vocab_xent_finish(losses, stats, row_sums, targets, N);
  return Status::OK();
}

#define ZT_INSTANTIATE_VOCAB_PARALLEL(A)                                                                          \
  template Status vocab_parallel_embedding_forward<A>(const ActivationOps<A>&, ProcessGroup*, A*, float*,        \
                                                      const int32_t*, const A*, const A*, int, int, int,        \
                                                      const VocabSlice&);                                        \
  template Status vocab_parallel_xent_forward<A>(const ActivationOps<A>&, const KernelOps&, ProcessGroup*, float*, \
                                                 float*, float*, float*, const A*, const int32_t*, int64_t,     \
                                                 const VocabSlice&);
ZT_INSTANTIATE_VOCAB_PARALLEL(float)
ZT_INSTANTIATE_VOCAB_PARALLEL(half_t)
#undef ZT_INSTANTIATE_VOCAB_PARALLEL

}  // namespace zt
