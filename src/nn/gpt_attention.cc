// The block's attention step: the attention kernels over a.qkv (the materialized pair, or
// flash attention with GptModelOptions::flash_attention), and with sequence parallelism
// (Ulysses, nn/ulysses.h) the exchanges around them. Under sp the kernels see the whole
// sequence (T_ sp tokens) and this rank's n_head / sp heads; a.qkv keeps the head-sharded
// layout from forward to backward (the attention backward reads it; the projections'
// backward does not), and a.att_out returns to this rank's tokens before the output
// projection.
// Saved state: materialized, a.att holds the (B, NHa, T, T) probabilities; flash, a.lse the
// rows' log-sum-exp and the backward's O is a.att_out itself, or under sp its head-layout
// copy in a.att (a.att_out has gone back to the sequence layout).
#include "nn/gpt_model_impl.h"
#include "nn/ulysses.h"

namespace zt {

template <typename A>
Status GptModelImpl<A>::ulysses(const A* in, A* out, int groups, int width, bool to_heads) {
  GptScratchT<A>& s = arena_.scratch;
  const UlyssesShape shape{B_, T_, groups, width};
  const UlyssesScratch buffers{s.sp_send, s.sp_recv, sizeof(A)};
  if (to_heads) return ulysses_to_heads(*options_.sp, backend_, in, out, buffers, shape);
  return ulysses_to_sequence(*options_.sp, backend_, in, out, buffers, shape);
}

template <typename A>
Status GptModelImpl<A>::attention_forward(const BlockActivationsT<A>& a) {
  const int P = options_.layout.tp_size * options_.layout.sp_size, S = options_.layout.sp_size;
  const int T = T_ * S, C = config_.n_embd / P, NH = config_.n_head / P;
  if (S > 1 && !sp_unpacked()) ZT_RETURN_IF_ERROR(ulysses(a.qkv, a.qkv, 3, config_.n_embd, /*to_heads=*/true));
  A* out = S > 1 && options_.flash_attention ? a.att : a.att_out;  // flash under sp: keep O in the head layout
  if (options_.flash_attention) {
    k_.flash_attention_forward(out, a.lse, a.qkv, B_, T, C, NH);
  } else {
    k_.attention_forward(out, a.att, a.qkv, B_, T, C, NH);
  }
  return S > 1 ? ulysses(out, a.att_out, 1, config_.n_embd, /*to_heads=*/false) : Status::OK();
}

// s.dqkv from s.dnorm, the gradient of a.att_out (this rank's tokens).
template <typename A>
Status GptModelImpl<A>::attention_backward(const BlockActivationsT<A>& a) {
  const int P = options_.layout.tp_size * options_.layout.sp_size, S = options_.layout.sp_size;
  const int T = T_ * S, C = config_.n_embd / P, NH = config_.n_head / P;
  GptScratchT<A>& s = arena_.scratch;
  if (S > 1) ZT_RETURN_IF_ERROR(ulysses(s.dnorm, s.dnorm, 1, config_.n_embd, /*to_heads=*/true));
  if (options_.flash_attention) {
    k_.flash_attention_backward(s.dqkv, s.dnorm, a.qkv, S > 1 ? a.att : a.att_out, a.lse, B_, T, C, NH);
  } else {
    k_.attention_backward(s.dqkv, s.dnorm, a.qkv, a.att, B_, T, C, NH);
  }
  if (S == 1 || sp_unpacked()) return Status::OK();  // unpacked: qkv_backward exchanges dq, dk, dv
  return ulysses(s.dqkv, s.dqkv, 3, config_.n_embd, /*to_heads=*/false);
}

template <typename A>
bool GptModelImpl<A>::sp_unpacked() const {
  return options_.layout.sp_size > 1 && !config_.fused_qkv && config_.kv_heads() % options_.layout.sp_size == 0;
}

// Unpacked exchange (sp_unpacked): q, k, v to the head layout one by one, or back.
template <typename A>
Status GptModelImpl<A>::ulysses_qkv(bool to_heads) {
  GptScratchT<A>& s = arena_.scratch;
  ZT_RETURN_IF_ERROR(ulysses(s.q, s.q, 1, config_.n_embd, to_heads));
  ZT_RETURN_IF_ERROR(ulysses(s.k, s.k, 1, config_.kv_dim(), to_heads));
  return ulysses(s.v, s.v, 1, config_.kv_dim(), to_heads);
}

#define ZT_INSTANTIATE_ATTENTION(A)                                                 \
  template Status GptModelImpl<A>::ulysses(const A*, A*, int, int, bool);           \
  template bool GptModelImpl<A>::sp_unpacked() const;                               \
  template Status GptModelImpl<A>::ulysses_qkv(bool);                               \
  template Status GptModelImpl<A>::attention_forward(const BlockActivationsT<A>&);  \
  template Status GptModelImpl<A>::attention_backward(const BlockActivationsT<A>&);
ZT_INSTANTIATE_ATTENTION(float)
ZT_INSTANTIATE_ATTENTION(half_t)
#undef ZT_INSTANTIATE_ATTENTION

}  // namespace zt
