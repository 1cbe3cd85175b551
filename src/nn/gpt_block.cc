// The transformer block, forward and backward, with Megatron's tensor parallelism
// (column-parallel input projections after copy_to_tp, row-parallel attn_out and mlp_out
// followed by reduce_from_tp) and activation checkpointing (a checkpointed block recomputes
// its internals from its saved input in backward).
#include "core/check.h"
#include "nn/gpt_model_impl.h"
#include "nn/tp/tp_mappings.h"

namespace zt {

// Pre-norm block, every configuration (the steps by knob are in gpt_layers.cc):
//   h   = x + attn_out(attention(qkv(norm1(x))))
//   out = h + mlp_out(act(mlp_in(norm2(h))))
template <typename A>
Status GptModelImpl<A>::block_forward(int l, const A* res_in, const BlockActivationsT<A>& a) {
  const int P = options_.layout.tp_size;
  const int C = config_.n_embd, Cl = C / P, Fl = config_.mlp_width() / P;
  const int64_t BT = static_cast<int64_t>(B_) * T_;
  const BlockWeightsT<A>& w = w_.blocks[static_cast<size_t>(l)];
  norm_forward(a.norm1, a.norm1_mean, a.norm1_rstd, res_in, w.norm1_w, w.norm1_b, BT);
  copy_to_tp_forward();
  quantize_input(l, 0, a.norm1, BT, C);
  ZT_RETURN_IF_ERROR(qkv_forward(w, a, BT));
  ZT_RETURN_IF_ERROR(attention_forward(a));
  quantize_input(l, 1, a.att_out, BT, Cl);
  ZT_RETURN_IF_ERROR(row_parallel_forward(a.res_attn, a.att_out, w.attn_out_w, w.attn_out_b, res_in, BT, Cl));
  norm_forward(a.norm2, a.norm2_mean, a.norm2_rstd, a.res_attn, w.norm2_w, w.norm2_b, BT);
  copy_to_tp_forward();
  quantize_input(l, 2, a.norm2, BT, C);
  if (config_.moe_block(l)) return moe_forward(l, a, BT);
  mlp_in_forward(w, a, BT);
  quantize_input(l, 3, a.mlp_act, BT, Fl);
  return row_parallel_forward(a.output, a.mlp_act, w.mlp_out_w, w.mlp_out_b, a.res_attn, BT, Fl);
}

template <typename A>
Status GptModelImpl<A>::forward_block(int l) {
  ZT_CHECK(options_.layout.owns_block(config_, l), "block %d is not on this stage", l);
  const BlockActivationsT<A>& a = slot().blocks[static_cast<size_t>(l)];
  const A* res_in = block_input(l);
  if (a.saved_input_part != nullptr) {  // partitioned checkpoint: keep this rank's slice of the input
    const size_t part = static_cast<size_t>(B_) * T_ * config_.n_embd / static_cast<size_t>(options_.layout.tp_size);
    backend_.copy(a.saved_input_part, res_in + part * static_cast<size_t>(options_.layout.tp_rank), part * sizeof(A));
  }
  if (a.stashed_input) {  // the stash keeps the input (a live buffer, overwritten two blocks on)
    ZT_RETURN_IF_ERROR(options_.stash->save(slot_, l, res_in, static_cast<size_t>(B_) * T_ * config_.n_embd * sizeof(A)));
  } else if (options_.stash != nullptr) {
    options_.stash->finish_saves();  // this block may write the live buffer a save is still reading
  }
  const BlockRoute* r = route(l);
  if (r == nullptr) return block_forward(l, res_in, a);
  branch_scale_ = r->scale;
  const Status s = r->kept > 0 || r->skip ? routed_forward(l, *r, res_in, a) : block_forward(l, res_in, a);
  branch_scale_ = 1.0f;
  return s;
}

// Refills the recompute set by re-running block l's forward from its saved input;
// *res_in receives that input (all-gathered first if it was partitioned).
template <typename A>
Status GptModelImpl<A>::recompute(int l, const A** res_in) {
  const BlockActivationsT<A>& a = slot().blocks[static_cast<size_t>(l)];
  GptScratchT<A>& s = arena_.scratch;
  *res_in = block_input(l);
  if (a.saved_input_part != nullptr) {
    const int P = options_.layout.tp_size;
    const size_t part = static_cast<size_t>(B_) * T_ * config_.n_embd / static_cast<size_t>(P);
    backend_.copy(s.gathered_input + part * static_cast<size_t>(options_.layout.tp_rank), a.saved_input_part,
                  part * sizeof(A));
    ZT_RETURN_IF_ERROR(all_gather_tp(options_.tp, s.gathered_input, part));
    *res_in = s.gathered_input;
  }
  if (a.stashed_input) {  // brought back into one of two buffers while the next one's copy lands in the other
    A* const back[2] = {s.gathered_input, s.gathered_ahead != nullptr ? s.gathered_ahead : s.gathered_input};
    ZT_RETURN_IF_ERROR(options_.stash->load(slot_, l, back[l % 2]));
    *res_in = back[l % 2];
    if (slot().blocks[static_cast<size_t>(l - 1)].stashed_input) {
      options_.stash->prefetch(slot_, l - 1, back[(l - 1) % 2]);  // next in backward
    }
  }
  return block_forward(l, *res_in, s.recompute);
}

template <typename A>
Status GptModelImpl<A>::backward_block(int l) {
  ZT_CHECK(options_.layout.owns_block(config_, l), "block %d is not on this stage", l);
  const BlockRoute* r = route(l);
  if (r != nullptr && (r->kept > 0 || r->skip)) {
    branch_scale_ = r->scale;
    const Status s = routed_backward(l, *r);
    branch_scale_ = 1.0f;
    return s;
  }
  branch_scale_ = r != nullptr ? r->scale : 1.0f;
  const BlockActivationsT<A>* a = &slot().blocks[static_cast<size_t>(l)];
  const A* res_in = block_input(l);
  Status s = Status::OK();
  if (a->checkpointed) {
    s = recompute(l, &res_in);
    a = &arena_.scratch.recompute;
  }
  if (s.ok()) s = block_backward(l, *a, res_in);
  branch_scale_ = 1.0f;
  return s;
}

template <typename A>
void GptModelImpl<A>::quantize_input(int layer, int slot, A* x, int64_t rows, int width) {
  const int bits = act_bits_ == nullptr ? 0 : (*act_bits_)[static_cast<size_t>(layer)][static_cast<size_t>(slot)];
  if (bits == 0) return;
  k_.fake_quant(x, rows * width, rows, bits, act_symmetric_);  // one group per row (token)
}

// The gradient of a branch output: dres itself, or scaled for a scaled block.
template <typename A>
const A* GptModelImpl<A>::branch_grad(const A* dres, int64_t n) {
  if (branch_scale_ == 1.0f) return dres;
  GptScratchT<A>& s = arena_.scratch;
  k_.to_f32(s.route_f32, dres, n);
  f32_.scale(s.route_f32, branch_scale_, n);
  k_.from_f32(s.route_branch, s.route_f32, n);
  return s.route_branch;
}

template <typename A>
Status GptModelImpl<A>::block_backward(int l, const BlockActivationsT<A>& a, const A* res_in) {
  const int P = options_.layout.tp_size;
  const int C = config_.n_embd, Cl = C / P, Fl = config_.mlp_width() / P;
  const int64_t BT = static_cast<int64_t>(B_) * T_;
  const BlockWeightsT<A>& w = w_.blocks[static_cast<size_t>(l)];
  const BlockWeightsT<float>& dw = dw_.blocks[static_cast<size_t>(l)];
  GptScratchT<A>& s = arena_.scratch;
  A* dres = s.dresidual;  // holds dL/d(output) on entry, dL/d(block input) on exit
  // MLP: row-parallel mlp_out (local backward), column-parallel input side (input gradient summed).
  if (config_.moe_block(l)) {
    ZT_RETURN_IF_ERROR(moe_backward(l, a, BT));
  } else {
    reduce_from_tp_backward();
    k_.linear_backward(s.dmlp, dw.mlp_out_w, dw.mlp_out_b, branch_grad(dres, BT * C), a.mlp_act, w.mlp_out_w, BT, Fl,
                       C);
    ZT_RETURN_IF_ERROR(mlp_in_backward(w, dw, a, BT));
  }
  norm_backward(dres, dw.norm2_w, dw.norm2_b, s.dnorm, a.res_attn, w.norm2_w, a.norm2_mean, a.norm2_rstd, BT);
  // Attention: row-parallel attn_out, the rank's heads, column-parallel q, k, v.
  reduce_from_tp_backward();
  k_.linear_backward(s.dnorm, dw.attn_out_w, dw.attn_out_b, branch_grad(dres, BT * C), a.att_out, w.attn_out_w, BT, Cl,
                     C);
  ZT_RETURN_IF_ERROR(attention_backward(a));
  ZT_RETURN_IF_ERROR(qkv_backward(w, dw, a, BT));
  norm_backward(dres, dw.norm1_w, dw.norm1_b, s.dnorm, res_in, w.norm1_w, a.norm1_mean, a.norm1_rstd, BT);
  return Status::OK();
}

#define ZT_INSTANTIATE_BLOCKS(A)                                                                      \
  template Status GptModelImpl<A>::block_forward(int, const A*, const BlockActivationsT<A>&);           \
  template Status GptModelImpl<A>::forward_block(int);                                                  \
  template Status GptModelImpl<A>::recompute(int, const A**);                                           \
  template Status GptModelImpl<A>::backward_block(int);                                                 \
  template Status GptModelImpl<A>::block_backward(int, const BlockActivationsT<A>&, const A*);          \
  template const A* GptModelImpl<A>::branch_grad(const A*, int64_t);                                     \
  template void GptModelImpl<A>::quantize_input(int, int, A*, int64_t, int);
ZT_INSTANTIATE_BLOCKS(float)
ZT_INSTANTIATE_BLOCKS(half_t)
#undef ZT_INSTANTIATE_BLOCKS

}  // namespace zt
