// The Llama family inside GptModelImpl<A> (HF LlamaForCausalLM): embeddings without a
// position table, the block, and the RMSNorm + lm_head head, for every storage type and
// with Megatron's tensor parallelism.
//
// Per block (pre-norm, no biases):
//   h   = x + o_proj(attn(rope(q_proj(n1)), rope(k_proj(n1)), v_proj(n1))),  n1 = RMSNorm(x)
//   out = h + down_proj(silu(gate_proj(n2)) * up_proj(n2)),                 n2 = RMSNorm(h)
// Tensor parallelism (tp | num_key_value_heads, tp | intermediate_size): q, k, v, gate and
// up are column-parallel with whole heads and whole kv heads per rank; o and down are
// row-parallel; the embedding and an untied lm_head are vocabulary-parallel.
// Grouped-query attention reuses the fused attention kernel: after RoPE, q and the rank's
// kv heads are packed into its (B, T, 3Cl) layout with kv head g repeated rep = n_head /
// n_kv_head times (query head h reads kv head h / rep, HF repeat_kv); the backward sums the
// rep gradients of each kv head. Input gradients of the layers that share an input
// (q, k, v; gate, up) are summed in fp32 and rounded once.
#include <algorithm>
#include <cstring>
#include <initializer_list>
#include <type_traits>

#include "core/check.h"
#include "nn/gpt_model_impl.h"
#include "nn/tp/tp_mappings.h"
#include "nn/tp/vocab_parallel.h"

namespace zt {

namespace {

struct LlamaDims {
  int C, Cl, NHl, NKVl, HD, KVl, Il, rep;
};

LlamaDims llama_dims(const GptConfig& c, int P) {
  LlamaDims d;
  d.C = c.n_embd;
  d.Cl = c.n_embd / P;
  d.NHl = c.n_head / P;
  d.NKVl = c.kv_heads() / P;
  d.HD = c.head_size();
  d.KVl = d.NKVl * d.HD;
  d.Il = c.intermediate_size / P;
  d.rep = c.n_head / c.kv_heads();
  return d;
}

}  // namespace

template <typename A>
Status GptModelImpl<A>::llama_block_forward(int l, const A* x, const BlockActivationsT<A>& a) {
  const LlamaDims d = llama_dims(config_, options_.layout.tp_size);
  const int64_t BT = static_cast<int64_t>(B_) * T_;
  const LlamaBlockWeightsT<A>& w = lw_.blocks[static_cast<size_t>(l)];
  GptScratchT<A>& s = arena_.scratch;
  // Attention.
  k_.rmsnorm_forward(a.ln1, a.ln1_rstd, x, w.in_norm, BT, d.C, config_.rms_norm_eps);
  copy_to_tp_forward();
  quantize_input(l, 0, a.ln1, BT, d.C);
  k_.linear_forward(s.q, a.ln1, w.q, nullptr, nullptr, BT, d.C, d.Cl);
  k_.linear_forward(s.k, a.ln1, w.k, nullptr, nullptr, BT, d.C, d.KVl);
  k_.linear_forward(s.v, a.ln1, w.v, nullptr, nullptr, BT, d.C, d.KVl);
  rope(s.q, d.NHl, /*backward=*/false);
  rope(s.k, d.NKVl, /*backward=*/false);
  k_.gqa_pack(a.qkv, s.q, s.k, s.v, BT, d.NHl, d.NKVl, d.HD);  // local query head h reads local kv head h / rep
  k_.attention_forward(a.atty, a.att, a.qkv, B_, T_, d.Cl, d.NHl);
  quantize_input(l, 1, a.atty, BT, d.Cl);
  ZT_RETURN_IF_ERROR(row_parallel_forward(a.res2, a.atty, w.o, nullptr, x, BT, d.Cl));
  // SwiGLU MLP.
  k_.rmsnorm_forward(a.ln2, a.ln2_rstd, a.res2, w.post_norm, BT, d.C, config_.rms_norm_eps);
  copy_to_tp_forward();
  quantize_input(l, 2, a.ln2, BT, d.C);
  k_.linear_forward(a.fch, a.ln2, w.gate, nullptr, nullptr, BT, d.C, d.Il);
  k_.linear_forward(a.up, a.ln2, w.up, nullptr, nullptr, BT, d.C, d.Il);
  k_.swiglu_forward(a.fch_gelu, a.fch, a.up, BT * d.Il);
  quantize_input(l, 3, a.fch_gelu, BT, d.Il);
  return row_parallel_forward(a.res3, a.fch_gelu, w.down, nullptr, a.res2, BT, d.Il);
}

template <typename A>
Status GptModelImpl<A>::llama_column_backward(A* dinp, const A* inp, std::initializer_list<ColumnGrad> layers,
                                              int64_t N) {
  const int C = config_.n_embd;
  GptScratchT<A>& s = arena_.scratch;
  bool first = true;
  for (const ColumnGrad& g : layers) {
    float* part = first ? s.tp_partial : s.grad_tmp;
    k_.linear_backward_partial(part, g.dweight, nullptr, g.dout, inp, g.weight, N, C, g.out_dim);
    if (!first) f32_.accumulate(s.tp_partial, s.grad_tmp, N * C);
    first = false;
  }
  if (tp()) ZT_RETURN_IF_ERROR(copy_to_tp_backward(options_.tp, s.tp_partial, static_cast<size_t>(N) * C));
  k_.from_f32(dinp, s.tp_partial, N * C);
  return Status::OK();
}

template <typename A>
Status GptModelImpl<A>::llama_block_backward(int l, const BlockActivationsT<A>& a, const A* x) {
  const LlamaDims d = llama_dims(config_, options_.layout.tp_size);
  const int64_t BT = static_cast<int64_t>(B_) * T_;
  const LlamaBlockWeightsT<A>& w = lw_.blocks[static_cast<size_t>(l)];
  const LlamaBlockWeightsT<float>& dw = ldw_.blocks[static_cast<size_t>(l)];
  GptScratchT<A>& s = arena_.scratch;
  A* dres = s.dresidual;  // dL/d(block output) on entry, dL/d(block input) on exit
  // MLP: row-parallel down_proj (local), column-parallel gate and up (input gradient summed).
  reduce_from_tp_backward();
  k_.linear_backward(s.dfch, dw.down, nullptr, branch_grad(dres, BT * d.C), a.fch_gelu, w.down, BT, d.Il, d.C);
  k_.swiglu_backward(s.dfch, s.dup, s.dfch, a.fch, a.up, BT * d.Il);
  ZT_RETURN_IF_ERROR(llama_column_backward(s.dln, a.ln2, {{dw.gate, s.dfch, w.gate, d.Il}, {dw.up, s.dup, w.up, d.Il}},
                                           BT));
  k_.rmsnorm_backward(dres, dw.post_norm, s.dln, a.res2, w.post_norm, a.ln2_rstd, BT, d.C);
  // Attention: row-parallel o_proj, the rank's heads, column-parallel q, k, v.
  reduce_from_tp_backward();
  k_.linear_backward(s.dln, dw.o, nullptr, branch_grad(dres, BT * d.C), a.atty, w.o, BT, d.Cl, d.C);
  k_.attention_backward(s.dqkv, s.dln, a.qkv, a.att, B_, T_, d.Cl, d.NHl);
  k_.gqa_unpack(s.q, s.k, s.v, s.dqkv, BT, d.NHl, d.NKVl, d.HD);
  rope(s.q, d.NHl, /*backward=*/true);
  rope(s.k, d.NKVl, /*backward=*/true);
  ZT_RETURN_IF_ERROR(llama_column_backward(
      s.dln, a.ln1, {{dw.q, s.q, w.q, d.Cl}, {dw.k, s.k, w.k, d.KVl}, {dw.v, s.v, w.v, d.KVl}}, BT));
  k_.rmsnorm_backward(dres, dw.in_norm, s.dln, x, w.in_norm, a.ln1_rstd, BT, d.C);
  return Status::OK();
}

template <typename A>
Status GptModelImpl<A>::llama_forward_embedding(const int32_t* tokens) {
  if (!tp()) {
    k_.encoder_forward(slot().encoded, tokens, lw_.embed, nullptr, B_, T_, config_.n_embd);
    return Status::OK();
  }
  const int Vl = config_.padded_vocab() / options_.layout.tp_size;
  return vocab_parallel_embedding_forward(k_, options_.tp, slot().encoded, arena_.scratch.tp_partial, tokens,
                                          lw_.embed, static_cast<const A*>(nullptr), B_, T_, config_.n_embd,
                                          VocabSlice{options_.layout.tp_rank * Vl, Vl, config_.vocab_size});
}

template <typename A>
void GptModelImpl<A>::llama_backward_embedding(const int32_t* tokens) {
  const A* dout = arena_.scratch.dresidual;
  if (!tp()) {
    k_.encoder_backward(ldw_.embed, nullptr, dout, tokens, B_, T_, config_.n_embd);
    return;
  }
  const int Vl = config_.padded_vocab() / options_.layout.tp_size;
  k_.vocab_embedding_backward(ldw_.embed, nullptr, dout, tokens, B_, T_, config_.n_embd,
                              VocabSlice{options_.layout.tp_rank * Vl, Vl, config_.vocab_size});
}

template <typename A>
Status GptModelImpl<A>::llama_forward_head() {
  const int C = config_.n_embd, Vl = config_.padded_vocab() / options_.layout.tp_size;
  const int64_t BT = static_cast<int64_t>(B_) * T_;
  GptActivationsT<A>& a = slot();
  k_.rmsnorm_forward(a.lnf, a.lnf_rstd, block_input(config_.n_layer), lw_.norm, BT, C, config_.rms_norm_eps);
  copy_to_tp_forward();
  k_.linear_forward(a.logits, a.lnf, lw_.lm_head, nullptr, nullptr, BT, C, Vl);
  return Status::OK();
}

template <typename A>
Status GptModelImpl<A>::llama_backward_head(A* dlogits) {
  const int C = config_.n_embd, Vl = config_.padded_vocab() / options_.layout.tp_size;
  const int64_t BT = static_cast<int64_t>(B_) * T_;
  GptActivationsT<A>& a = slot();
  GptScratchT<A>& s = arena_.scratch;
  ZT_RETURN_IF_ERROR(column_parallel_backward(s.dln, ldw_.lm_head, nullptr, dlogits, a.lnf, lw_.lm_head, BT, C, Vl));
  k_.rmsnorm_backward(s.dresidual, ldw_.norm, s.dln, block_input(config_.n_layer), lw_.norm, a.lnf_rstd, BT, C);
  return Status::OK();
}

#define ZT_INSTANTIATE_LLAMA(A)                                                                             \
  template Status GptModelImpl<A>::llama_block_forward(int, const A*, const BlockActivationsT<A>&);         \
  template Status GptModelImpl<A>::llama_block_backward(int, const BlockActivationsT<A>&, const A*);        \
  template Status GptModelImpl<A>::llama_column_backward(A*, const A*, std::initializer_list<ColumnGrad>, int64_t); \
  template Status GptModelImpl<A>::llama_forward_embedding(const int32_t*);                                 \
  template void GptModelImpl<A>::llama_backward_embedding(const int32_t*);                                  \
  template Status GptModelImpl<A>::llama_forward_head();                                                    \
  template Status GptModelImpl<A>::llama_backward_head(A*);
ZT_INSTANTIATE_LLAMA(float)
ZT_INSTANTIATE_LLAMA(half_t)
#undef ZT_INSTANTIATE_LLAMA

}  // namespace zt
