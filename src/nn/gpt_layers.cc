// The steps of a transformer block, each following one knob of the config: the norm
// (LayerNorm or RMSNorm), the attention's input projections (one fused qkv, or q, k, v
// with RoPE for rotary positions and grouped-query packing), the MLP's input side (GELU,
// or SwiGLU's gate and up), and the tensor-parallel linear layers they use (Megatron's
// column-parallel layers after copy_to_tp, row-parallel ones before reduce_from_tp).
// Grouped-query attention reuses the fused attention kernel: q and the rank's kv heads are
// packed into its (B, T, 3Cl) layout with kv head g repeated rep = n_head / n_kv_head times
// (query head h reads kv head h / rep, HF repeat_kv); the backward sums the rep gradients of
// each kv head. Input gradients of layers that share an input (q, k, v; gate, up) are
// summed in fp32 and rounded once; a lone layer's (c_attn, c_fc) come from one GEMM.
#include <initializer_list>

#include "core/check.h"
#include "nn/gpt_model_impl.h"
#include "nn/tp/tp_mappings.h"

namespace zt {

namespace {

// The rank's widths: C, its query width Cl, heads NHl and kv heads NKVl, head size HD, kv
// width KVl and MLP width Fl.
struct Widths {
  int C, Cl, NHl, NKVl, HD, KVl, Fl;
};

Widths widths(const GptConfig& c, int P) {
  Widths d;
  d.C = c.n_embd;
  d.Cl = c.n_embd / P;
  d.NHl = c.n_head / P;
  d.NKVl = c.kv_heads() / P;
  d.HD = c.head_size();
  d.KVl = d.NKVl * d.HD;
  d.Fl = c.mlp_width() / P;
  return d;
}

}  // namespace

template <typename A>
void GptModelImpl<A>::norm_forward(A* out, float* mean, float* rstd, const A* x, const A* w, const A* b, int64_t N) {
  if (config_.rms_norm()) {
    k_.rmsnorm_forward(out, rstd, x, w, N, config_.n_embd, config_.rms_norm_eps);
  } else {
    k_.layernorm_forward(out, mean, rstd, x, w, b, N, config_.n_embd);
  }
}

template <typename A>
void GptModelImpl<A>::norm_backward(A* dx, float* dw, float* db, const A* dout, const A* x, const A* w,
                                    const float* mean, const float* rstd, int64_t N) {
  if (config_.rms_norm()) {
    k_.rmsnorm_backward(dx, dw, dout, x, w, rstd, N, config_.n_embd);
  } else {
    k_.layernorm_backward(dx, dw, db, dout, x, w, mean, rstd, N, config_.n_embd);
  }
}

template <typename A>
Status GptModelImpl<A>::qkv_forward(const BlockWeightsT<A>& w, const BlockActivationsT<A>& a, int64_t N) {
  const Widths d = widths(config_, options_.layout.tp_size);
  if (config_.fused_qkv) {
    k_.linear_forward(a.qkv, a.norm1, w.qkv_w, w.qkv_b, nullptr, N, d.C, 3 * d.Cl);
    return Status::OK();
  }
  GptScratchT<A>& s = arena_.scratch;
  k_.linear_forward(s.q, a.norm1, w.q_w, w.q_b, nullptr, N, d.C, d.Cl);
  k_.linear_forward(s.k, a.norm1, w.k_w, w.k_b, nullptr, N, d.C, d.KVl);
  k_.linear_forward(s.v, a.norm1, w.v_w, w.v_b, nullptr, N, d.C, d.KVl);
  if (config_.rotary()) {
    rope(s.q, d.NHl, /*backward=*/false);
    rope(s.k, d.NKVl, /*backward=*/false);
  }
  if (sp_unpacked()) {  // to the head layout first, then packed for this rank's heads over the whole sequence
    const int S = options_.layout.sp_size;
    ZT_RETURN_IF_ERROR(ulysses_qkv(/*to_heads=*/true));
    k_.gqa_pack(a.qkv, s.q, s.k, s.v, N * S, d.NHl / S, d.NKVl / S, d.HD);
    return Status::OK();
  }
  k_.gqa_pack(a.qkv, s.q, s.k, s.v, N, d.NHl, d.NKVl, d.HD);  // local query head h reads local kv head h / rep
  return Status::OK();
}

template <typename A>
Status GptModelImpl<A>::qkv_backward(const BlockWeightsT<A>& w, const BlockWeightsT<float>& dw,
                                     const BlockActivationsT<A>& a, int64_t N) {
  const Widths d = widths(config_, options_.layout.tp_size);
  GptScratchT<A>& s = arena_.scratch;
  if (config_.fused_qkv) return column_backward(s.dnorm, a.norm1, {{dw.qkv_w, dw.qkv_b, s.dqkv, w.qkv_w, 3 * d.Cl}}, N);
  if (sp_unpacked()) {  // s.dqkv is in the head layout: unpacked there, then dq, dk, dv back
    const int S = options_.layout.sp_size;
    k_.gqa_unpack(s.q, s.k, s.v, s.dqkv, N * S, d.NHl / S, d.NKVl / S, d.HD);
    ZT_RETURN_IF_ERROR(ulysses_qkv(/*to_heads=*/false));
  } else {
    k_.gqa_unpack(s.q, s.k, s.v, s.dqkv, N, d.NHl, d.NKVl, d.HD);
  }
  if (config_.rotary()) {
    rope(s.q, d.NHl, /*backward=*/true);
    rope(s.k, d.NKVl, /*backward=*/true);
  }
  return column_backward(s.dnorm, a.norm1,
                         {{dw.q_w, dw.q_b, s.q, w.q_w, d.Cl}, {dw.k_w, dw.k_b, s.k, w.k_w, d.KVl},
                          {dw.v_w, dw.v_b, s.v, w.v_w, d.KVl}},
                         N);
}

template <typename A>
void GptModelImpl<A>::mlp_in_forward(const BlockWeightsT<A>& w, const BlockActivationsT<A>& a, int64_t N) {
  const Widths d = widths(config_, options_.layout.tp_size);
  k_.linear_forward(a.mlp_in, a.norm2, w.mlp_in_w, w.mlp_in_b, nullptr, N, d.C, d.Fl);
  if (!config_.swiglu()) {
    k_.gelu_forward(a.mlp_act, a.mlp_in, N * d.Fl);
    return;
  }
  k_.linear_forward(a.mlp_up, a.norm2, w.mlp_up_w, w.mlp_up_b, nullptr, N, d.C, d.Fl);
  k_.swiglu_forward(a.mlp_act, a.mlp_in, a.mlp_up, N * d.Fl);
}

template <typename A>
Status GptModelImpl<A>::mlp_in_backward(const BlockWeightsT<A>& w, const BlockWeightsT<float>& dw,
                                        const BlockActivationsT<A>& a, int64_t N) {
  const Widths d = widths(config_, options_.layout.tp_size);
  GptScratchT<A>& s = arena_.scratch;
  if (!config_.swiglu()) {
    k_.gelu_backward(s.dmlp, a.mlp_in, s.dmlp, N * d.Fl);
    return column_backward(s.dnorm, a.norm2, {{dw.mlp_in_w, dw.mlp_in_b, s.dmlp, w.mlp_in_w, d.Fl}}, N);
  }
  k_.swiglu_backward(s.dmlp, s.dmlp_up, s.dmlp, a.mlp_in, a.mlp_up, N * d.Fl);
  return column_backward(s.dnorm, a.norm2,
                         {{dw.mlp_in_w, dw.mlp_in_b, s.dmlp, w.mlp_in_w, d.Fl},
                          {dw.mlp_up_w, dw.mlp_up_b, s.dmlp_up, w.mlp_up_w, d.Fl}},
                         N);
}

template <typename A>
Status GptModelImpl<A>::column_backward(A* dinp, const A* inp, std::initializer_list<ColumnGrad> layers, int64_t N) {
  const int C = config_.n_embd;
  if (layers.size() == 1) {
    const ColumnGrad& g = *layers.begin();
    return column_parallel_backward(dinp, g.dweight, g.dbias, g.dout, inp, g.weight, N, C, g.out_dim);
  }
  GptScratchT<A>& s = arena_.scratch;
  bool first = true;
  for (const ColumnGrad& g : layers) {
    float* part = first ? s.tp_partial : s.grad_tmp;
    k_.linear_backward_partial(part, g.dweight, g.dbias, g.dout, inp, g.weight, N, C, g.out_dim);
    if (!first) f32_.accumulate(s.tp_partial, s.grad_tmp, N * C);
    first = false;
  }
  if (tp()) ZT_RETURN_IF_ERROR(copy_to_tp_backward(options_.tp, s.tp_partial, static_cast<size_t>(N) * C));
  k_.from_f32(dinp, s.tp_partial, N * C);
  return Status::OK();
}

// out = residual + bias + inp @ W^T for a row-parallel linear: without tensor parallelism
// one fused GEMM; with it, the rank's partial product is summed over ranks in fp32 first.
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

// A column-parallel layer's backward: dinp = dout @ weight (summed over tp ranks in fp32 and
// rounded once when tp > 1); dweight, dbias +=.
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

#define ZT_INSTANTIATE_LAYERS(A)                                                                                   \
  template void GptModelImpl<A>::norm_forward(A*, float*, float*, const A*, const A*, const A*, int64_t);            \
  template void GptModelImpl<A>::norm_backward(A*, float*, float*, const A*, const A*, const A*, const float*,      \
                                               const float*, int64_t);                                             \
  template Status GptModelImpl<A>::qkv_forward(const BlockWeightsT<A>&, const BlockActivationsT<A>&, int64_t);       \
  template Status GptModelImpl<A>::qkv_backward(const BlockWeightsT<A>&, const BlockWeightsT<float>&,               \
                                                const BlockActivationsT<A>&, int64_t);                             \
  template void GptModelImpl<A>::mlp_in_forward(const BlockWeightsT<A>&, const BlockActivationsT<A>&, int64_t);      \
  template Status GptModelImpl<A>::mlp_in_backward(const BlockWeightsT<A>&, const BlockWeightsT<float>&,            \
                                                   const BlockActivationsT<A>&, int64_t);                          \
  template Status GptModelImpl<A>::column_backward(A*, const A*, std::initializer_list<ColumnGrad>, int64_t);        \
  template Status GptModelImpl<A>::row_parallel_forward(A*, const A*, const A*, const A*, const A*, int64_t, int);   \
  template Status GptModelImpl<A>::column_parallel_backward(A*, float*, float*, const A*, const A*, const A*,        \
                                                            int64_t, int, int);
ZT_INSTANTIATE_LAYERS(float)
ZT_INSTANTIATE_LAYERS(half_t)
#undef ZT_INSTANTIATE_LAYERS

}  // namespace zt
