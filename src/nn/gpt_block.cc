// The transformer block (pre-LN GPT-2), forward and backward, with Megatron's tensor
// parallelism (column-parallel c_attn and c_fc after copy_to_tp, row-parallel attn.c_proj
// and mlp.c_proj followed by reduce_from_tp) and activation checkpointing (a
// checkpointed block recomputes its internals from its saved input in backward).
#include "core/check.h"
#include "kernels/cpu/fake_quant.h"
#include "nn/gpt_model_impl.h"
#include "nn/tp/tp_mappings.h"

namespace zt {

// out = residual + bias + inp @ W^T for a row-parallel linear: without tensor parallelism
// one fused GEMM; with it (float models only), the rank's partial product is summed over
// ranks first.
template <typename A>
Status GptModelImpl<A>::row_parallel_forward(A* out, const A* inp, const A* weight, const A* bias, const A* residual,
                                             int64_t N, int in_dim) {
  const int C = config_.n_embd;
  if (branch_scale_ != 1.0f) {  // out = residual + scale * (inp @ W^T + bias); tp = 1 (set_routes)
    GptScratchT<A>& s = arena_.scratch;
    k_.linear_forward(s.route_branch, inp, weight, bias, nullptr, N, in_dim, C);
    k_.to_f32(s.route_f32, s.route_branch, N * C);
    f32_.scale(s.route_f32, branch_scale_, N * C);
    k_.bias_residual(out, residual, s.route_f32, nullptr, N, C);
    return Status::OK();
  }
  if (!tp()) {
    k_.linear_forward(out, inp, weight, bias, residual, N, in_dim, C);
    return Status::OK();
  }
  float* partial = arena_.scratch.tp_partial;  // summed in fp32
  k_.linear_partial(partial, inp, weight, N, in_dim, C);
  ZT_RETURN_IF_ERROR(reduce_from_tp_forward(options_.tp, partial, static_cast<size_t>(N) * C));
  k_.bias_residual(out, residual, partial, bias, N, C);
  reduce_from_tp_backward();
  return Status::OK();
}

template <typename A>
Status GptModelImpl<A>::column_parallel_backward(A* dinp, float* dweight, float* dbias, const A* dout, const A* inp,
                                                 const A* weight, int64_t N, int C, int OC) {
  if (!tp()) {
    k_.linear_backward(dinp, dweight, dbias, dout, inp, weight, N, C, OC);
    return Status::OK();
  }
  float* partial = arena_.scratch.tp_partial;
  k_.linear_backward_partial(partial, dweight, dbias, dout, inp, weight, N, C, OC);
  ZT_RETURN_IF_ERROR(copy_to_tp_backward(options_.tp, partial, static_cast<size_t>(N) * C));
  k_.from_f32(dinp, partial, N * C);
  return Status::OK();
}

template <typename A>
Status GptModelImpl<A>::block_forward(int l, const A* res_in, const BlockActivationsT<A>& a) {
  if (config_.is_llama()) return llama_block_forward(l, res_in, a);
  const int P = options_.layout.tp_size;
  const int C = config_.n_embd, Cl = C / P, NHl = config_.n_head / P;
  const int64_t BT = static_cast<int64_t>(B_) * T_;
  const BlockWeightsT<A>& w = w_.blocks[static_cast<size_t>(l)];
  k_.layernorm_forward(a.ln1, a.ln1_mean, a.ln1_rstd, res_in, w.ln1w, w.ln1b, BT, C);
  copy_to_tp_forward();
  quantize_input(l, 0, a.ln1, BT, C);
  k_.linear_forward(a.qkv, a.ln1, w.qkvw, w.qkvb, nullptr, BT, C, 3 * Cl);
  k_.attention_forward(a.atty, a.att, a.qkv, B_, T_, Cl, NHl);
  quantize_input(l, 1, a.atty, BT, Cl);
  ZT_RETURN_IF_ERROR(row_parallel_forward(a.res2, a.atty, w.attprojw, w.attprojb, res_in, BT, Cl));
  k_.layernorm_forward(a.ln2, a.ln2_mean, a.ln2_rstd, a.res2, w.ln2w, w.ln2b, BT, C);
  copy_to_tp_forward();
  quantize_input(l, 2, a.ln2, BT, C);
  k_.linear_forward(a.fch, a.ln2, w.fcw, w.fcb, nullptr, BT, C, 4 * Cl);
  k_.gelu_forward(a.fch_gelu, a.fch, BT * 4 * Cl);
  quantize_input(l, 3, a.fch_gelu, BT, 4 * Cl);
  return row_parallel_forward(a.res3, a.fch_gelu, w.fcprojw, w.fcprojb, a.res2, BT, 4 * Cl);
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
  if (a.stashed_input) {
    ZT_ASSIGN_OR_RETURN(const void* in, options_.stash->load(slot_, l));
    *res_in = static_cast<const A*>(in);
    if (slot().blocks[static_cast<size_t>(l - 1)].stashed_input) options_.stash->prefetch(slot_, l - 1);  // next in backward
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
  const int64_t n = rows * width;
  if constexpr (std::is_same_v<A, float>) {
    fake_quant(x, n, rows, bits, act_symmetric_);
  } else {
    act_f32_.resize(static_cast<size_t>(n));
    k_.to_f32(act_f32_.data(), x, n);
    fake_quant(act_f32_.data(), n, rows, bits, act_symmetric_);
    k_.from_f32(x, act_f32_.data(), n);
  }
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
Status GptModelImpl<A>::block_backward(int l, const BlockActivationsT<A>& act, const A* res_in) {
  if (config_.is_llama()) return llama_block_backward(l, act, res_in);
  const int P = options_.layout.tp_size;
  const int C = config_.n_embd, Cl = C / P, NHl = config_.n_head / P;
  const int64_t BT = static_cast<int64_t>(B_) * T_;
  const BlockWeightsT<A>& w = w_.blocks[static_cast<size_t>(l)];
  const BlockWeightsT<float>& dw = dw_.blocks[static_cast<size_t>(l)];
  GptScratchT<A>& s = arena_.scratch;
  const BlockActivationsT<A>* a = &act;
  A* dres = s.dresidual;  // holds dL/d(res3) on entry, dL/d(block input) on exit
  // MLP: row-parallel c_proj (local backward), column-parallel c_fc (input gradient summed).
  reduce_from_tp_backward();
  k_.linear_backward(s.dfch, dw.fcprojw, dw.fcprojb, branch_grad(dres, BT * C), a->fch_gelu, w.fcprojw, BT, 4 * Cl, C);
  k_.gelu_backward(s.dfch, a->fch, s.dfch, BT * 4 * Cl);
  ZT_RETURN_IF_ERROR(column_parallel_backward(s.dln, dw.fcw, dw.fcb, s.dfch, a->ln2, w.fcw, BT, C, 4 * Cl));
  k_.layernorm_backward(dres, dw.ln2w, dw.ln2b, s.dln, a->res2, w.ln2w, a->ln2_mean, a->ln2_rstd, BT, C);
  // Attention: row-parallel c_proj, the rank's heads, column-parallel c_attn.
  reduce_from_tp_backward();
  k_.linear_backward(s.dln, dw.attprojw, dw.attprojb, branch_grad(dres, BT * C), a->atty, w.attprojw, BT, Cl, C);
  k_.attention_backward(s.dqkv, s.dln, a->qkv, a->att, B_, T_, Cl, NHl);
  ZT_RETURN_IF_ERROR(column_parallel_backward(s.dln, dw.qkvw, dw.qkvb, s.dqkv, a->ln1, w.qkvw, BT, C, 3 * Cl));
  k_.layernorm_backward(dres, dw.ln1w, dw.ln1b, s.dln, res_in, w.ln1w, a->ln1_mean, a->ln1_rstd, BT, C);
  return Status::OK();
}

#define ZT_INSTANTIATE_BLOCKS(A)                                                                      \
  template Status GptModelImpl<A>::row_parallel_forward(A*, const A*, const A*, const A*, const A*, int64_t, int); \
  template Status GptModelImpl<A>::block_forward(int, const A*, const BlockActivationsT<A>&);           \
  template Status GptModelImpl<A>::forward_block(int);                                                  \
  template Status GptModelImpl<A>::recompute(int, const A**);                                           \
  template Status GptModelImpl<A>::backward_block(int);                                                 \
  template Status GptModelImpl<A>::block_backward(int, const BlockActivationsT<A>&, const A*);          \
  template const A* GptModelImpl<A>::branch_grad(const A*, int64_t);                                     \
  template void GptModelImpl<A>::quantize_input(int, int, A*, int64_t, int);                             \
  template Status GptModelImpl<A>::column_parallel_backward(A*, float*, float*, const A*, const A*, const A*, int64_t, \
                                                            int, int);
ZT_INSTANTIATE_BLOCKS(float)
ZT_INSTANTIATE_BLOCKS(half_t)
#undef ZT_INSTANTIATE_BLOCKS

}  // namespace zt
