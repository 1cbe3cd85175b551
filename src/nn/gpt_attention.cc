// The block's attention step: the fused attention kernels over a.qkv, and with sequence
// parallelism (Ulysses, nn/ulysses.h) the exchanges around them. Under sp the kernels see
// the whole sequence (T_ sp tokens) and this rank's n_head / sp heads; a.qkv keeps the
// head-sharded layout from forward to backward (the attention backward reads it; the
// projections' backward does not), a.att_out returns to this rank's tokens before the
// output projection, and a.att holds those heads' (B, NH/sp, T, T) probabilities.
#include "nn/gpt_model_impl.h"
#include "nn/ulysses.h"

namespace zt {

template <typename A>
Status GptModelImpl<A>::ulysses(A* x, int groups, bool to_heads) {
  GptScratchT<A>& s = arena_.scratch;
  const UlyssesShape shape{B_, T_, groups, config_.n_embd};
  if (to_heads) return ulysses_to_heads(*options_.sp, backend_, x, s.sp_send, s.sp_recv, sizeof(A), shape);
  return ulysses_to_sequence(*options_.sp, backend_, x, s.sp_send, s.sp_recv, sizeof(A), shape);
}

template <typename A>
Status GptModelImpl<A>::attention_forward(const BlockActivationsT<A>& a) {
  const int P = options_.layout.tp_size, S = options_.layout.sp_size;
  if (S == 1) {
    k_.attention_forward(a.att_out, a.att, a.qkv, B_, T_, config_.n_embd / P, config_.n_head / P);
    return Status::OK();
  }
  ZT_RETURN_IF_ERROR(ulysses(a.qkv, 3, /*to_heads=*/true));
  k_.attention_forward(a.att_out, a.att, a.qkv, B_, T_ * S, config_.n_embd / S, config_.n_head / S);
  return ulysses(a.att_out, 1, /*to_heads=*/false);
}

// s.dqkv from s.dnorm, the gradient of a.att_out (this rank's tokens).
template <typename A>
Status GptModelImpl<A>::attention_backward(const BlockActivationsT<A>& a) {
  const int P = options_.layout.tp_size, S = options_.layout.sp_size;
  GptScratchT<A>& s = arena_.scratch;
  if (S == 1) {
    k_.attention_backward(s.dqkv, s.dnorm, a.qkv, a.att, B_, T_, config_.n_embd / P, config_.n_head / P);
    return Status::OK();
  }
  ZT_RETURN_IF_ERROR(ulysses(s.dnorm, 1, /*to_heads=*/true));
  k_.attention_backward(s.dqkv, s.dnorm, a.qkv, a.att, B_, T_ * S, config_.n_embd / S, config_.n_head / S);
  return ulysses(s.dqkv, 3, /*to_heads=*/false);
}

#define ZT_INSTANTIATE_ATTENTION(A)                                                 \
  template Status GptModelImpl<A>::ulysses(A*, int, bool);                          \
  template Status GptModelImpl<A>::attention_forward(const BlockActivationsT<A>&);  \
  template Status GptModelImpl<A>::attention_backward(const BlockActivationsT<A>&);
ZT_INSTANTIATE_ATTENTION(float)
ZT_INSTANTIATE_ATTENTION(half_t)
#undef ZT_INSTANTIATE_ATTENTION

}  // namespace zt
