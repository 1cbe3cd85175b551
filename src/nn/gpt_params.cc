// The parameter table and binding: one walk over a config's tensors by role (visit_*),
// used both to build the table and to bind views into an arena, so the two cannot
// disagree. Initialisation is nn/param_init.cc.
#include "nn/gpt_params.h"

#include <cmath>
#include <string>
#include <utility>

#include "core/check.h"
#include "nn/param_names.h"
#include "nn/param_spec.h"

namespace zt {

namespace {

constexpr float kStd = 0.02f;

// One tensor as the walk yields it: its full name, global shape, init and tensor-parallel cut
// (tp_dim -1: replicated).
struct ParamDef {
  std::string name;
  std::vector<int64_t> shape;
  InitKind init;
  float std = 0.0f;
  int tp_dim = -1;
  int tp_groups = 1;
  int init_rows = -1;  // rows drawn from the init (vocabulary matrices: the real vocabulary)
  int expert = -1;     // a routed expert's tensor: its global index
};

// The walk over one layer: f(def, slot) per tensor, in table order. Slot is the view the
// tensor binds to.
template <typename W, typename F>
class ParamWalk {
 public:
  // ep_rank of ep_size: the routed experts this walk yields (every expert for 0 of 1).
  ParamWalk(const GptConfig& c, F& f, int ep_rank, int ep_size)
      : c_(c), n_(param_names(c.family())), f_(f), ep_rank_(ep_rank), ep_size_(ep_size) {}

  void norm(const std::string& name, W*& w, W*& b) {
    const int64_t C = c_.n_embd;
    f_(ParamDef{name + ".weight", {C}, InitKind::kOnes}, w);
    if (!c_.rms_norm()) f_(ParamDef{name + ".bias", {C}, InitKind::kZeros}, b);
  }
  // A linear layer (out, in); column-parallel (tp_dim 0) layers slice their bias too.
  void linear(const std::string& name, int64_t out, int64_t in, bool bias, int tp_dim, float std, W*& w, W*& b,
              int groups = 1, int expert = -1) {
    f_(ParamDef{name + ".weight", {out, in}, InitKind::kNormal, std, tp_dim, groups, -1, expert}, w);
    if (bias) f_(ParamDef{name + ".bias", {out}, InitKind::kZeros, 0.0f, tp_dim == 0 ? 0 : -1, groups, -1, expert}, b);
  }
  void vocab_matrix(const char* name, W*& w) {
    f_(ParamDef{std::string(name) + ".weight", {c_.padded_vocab(), c_.n_embd}, InitKind::kNormal, kStd, 0, 1,
                c_.vocab_size},
       w);
  }

  void embedding(GptWeightsT<W>& w) {
    vocab_matrix(n_.embed, w.embed);
    if (!c_.rotary()) {
      f_(ParamDef{std::string(n_.positions) + ".weight", {c_.n_positions, c_.n_embd}, InitKind::kNormal, kStd}, w.positions);
    }
  }
  void block(int l, BlockWeightsT<W>& b);
  void experts(const std::string& prefix, float out_std, BlockWeightsT<W>& b);
  void head(GptWeightsT<W>& w) {
    norm(n_.norm_f, w.norm_f_w, w.norm_f_b);
    if (!c_.tied_head()) vocab_matrix(n_.lm_head, w.lm_head);
  }
  void tied_copy(GptWeightsT<W>& w) { vocab_matrix(n_.embed, w.lm_head); }

 private:
  const GptConfig& c_;
  const ParamNames& n_;
  F& f_;
  int ep_rank_, ep_size_;
};

template <typename W, typename F>
void ParamWalk<W, F>::block(int l, BlockWeightsT<W>& b) {
  const int64_t C = c_.n_embd, KV = c_.kv_dim(), I = c_.mlp_width();
  const float out_std = c_.scaled_residual_init ? kStd / std::sqrt(2.0f * static_cast<float>(c_.n_layer)) : kStd;
  const std::string p = block_prefix(n_, l);
  norm(p + n_.norm1, b.norm1_w, b.norm1_b);
  if (c_.fused_qkv) {
    linear(p + n_.qkv, 3 * C, C, c_.qkv_bias, 0, kStd, b.qkv_w, b.qkv_b, 3);
  } else {
    linear(p + n_.q, C, C, c_.qkv_bias, 0, kStd, b.q_w, b.q_b);
    linear(p + n_.k, KV, C, c_.qkv_bias, 0, kStd, b.k_w, b.k_b);
    linear(p + n_.v, KV, C, c_.qkv_bias, 0, kStd, b.v_w, b.v_b);
  }
  linear(p + n_.attn_out, C, C, c_.out_bias, 1, out_std, b.attn_out_w, b.attn_out_b);
  norm(p + n_.norm2, b.norm2_w, b.norm2_b);
  if (c_.moe_block(l)) return experts(p, out_std, b);
  linear(p + n_.mlp_in, I, C, c_.mlp_bias, 0, kStd, b.mlp_in_w, b.mlp_in_b);
  if (c_.swiglu()) linear(p + n_.mlp_up, I, C, c_.mlp_bias, 0, kStd, b.mlp_up_w, b.mlp_up_b);
  linear(p + n_.mlp_out, C, I, c_.mlp_bias, 1, out_std, b.mlp_out_w, b.mlp_out_b);
}

// An MoE block's router and experts (replicated across tensor-parallel ranks); the routed
// experts of this walk's ep rank only, under their global names.
template <typename W, typename F>
void ParamWalk<W, F>::experts(const std::string& p, float out_std, BlockWeightsT<W>& b) {
  const int64_t C = c_.n_embd, Ie = c_.expert_width(), E = c_.moe.num_experts;
  const int local = static_cast<int>(E) / ep_size_, first = ep_rank_ * local;
  W* no_bias = nullptr;
  linear(p + n_.moe_router, E, C, false, -1, kStd, b.router_w, no_bias);
  b.experts.resize(static_cast<size_t>(local));
  for (int j = first; j < first + local; ++j) {
    ExpertWeightsT<W>& x = b.experts[static_cast<size_t>(j - first)];
    const std::string e = p + n_.experts + std::to_string(j) + ".";
    linear(e + n_.expert_in, Ie, C, c_.mlp_bias, -1, kStd, x.in_w, x.in_b, 1, j);
    if (c_.swiglu()) linear(e + n_.expert_up, Ie, C, false, -1, kStd, x.up_w, no_bias, 1, j);
    linear(e + n_.expert_out, C, Ie, c_.mlp_bias, -1, out_std, x.out_w, x.out_b, 1, j);
  }
  if (!c_.moe.has_shared()) return;
  const int64_t S = c_.shared_width(), mix = moe_mix_logits(c_.moe.mix());
  const std::string sh = p + n_.shared;
  linear(sh + n_.expert_in, S, C, c_.mlp_bias, -1, kStd, b.shared.in_w, b.shared.in_b);
  if (c_.swiglu()) linear(sh + n_.expert_up, S, C, false, -1, kStd, b.shared.up_w, no_bias);
  linear(sh + n_.expert_out, C, S, c_.mlp_bias, -1, out_std, b.shared.out_w, b.shared.out_b);
  if (mix > 0) linear(p + n_.shared_gate, mix, C, mix == 2, -1, kStd, b.shared_gate_w, b.shared_gate_b);
}

// Walks `layer` (a layer id of the table) with f.
template <typename W, typename F>
void walk_layer(const GptConfig& c, int layer, GptWeightsT<W>& w, F f, int ep_rank, int ep_size) {
  ParamWalk<W, F> walk(c, f, ep_rank, ep_size);
  if (layer == kEmbeddingLayer) {
    walk.embedding(w);
  } else if (layer == tied_head_layer(c)) {
    walk.tied_copy(w);
  } else if (layer == c.n_layer) {
    walk.head(w);
  } else {
    walk.block(layer, w.blocks[static_cast<size_t>(layer)]);
  }
}

}  // namespace

ParamTable build_gpt_param_table(const GptConfig& cfg, const GptLayout& lay) {
  ParamTable table;
  table.set_tp(lay.tp_rank, lay.tp_size);
  table.set_ep(lay.ep_rank, lay.ep_size);
  GptWeightsT<float> none;
  none.blocks.resize(static_cast<size_t>(cfg.n_layer));
  auto add = [&](int layer) {
    walk_layer(
        cfg, layer, none,
        [&](const ParamDef& d, float*&) {
          TensorSpec s = param_spec(d.name, d.shape, layer, d.init, d.std);
          s.init_rows = d.init_rows;
          s.expert = d.expert;
          table.add(d.tp_dim >= 0 ? tp_slice(std::move(s), lay, d.tp_dim, d.tp_groups) : std::move(s));
        },
        lay.ep_rank, lay.ep_size);
  };
  if (lay.embedding) add(kEmbeddingLayer);
  for (int l : lay.blocks(cfg)) add(l);
  if (lay.head) {
    add(cfg.n_layer);
    if (lay.has_tied_copy() && cfg.tied_head()) add(tied_head_layer(cfg));
  }
  return table;
}

template <typename W>
void bind_gpt_layer(const GptConfig& cfg, const ParamTable& table, int layer, W* layer_base, GptWeightsT<W>* w) {
  walk_layer(
      cfg, layer, *w, [&](const ParamDef& d, W*& slot) { slot = param_in_layer(table, layer, layer_base, d.name); },
      table.ep_rank(), table.ep_size());
  if (layer == kEmbeddingLayer && cfg.tied_head()) w->lm_head = w->embed;
}

template <typename W>
GptWeightsT<W> bind_gpt_weights(const GptConfig& cfg, const ParamTable& table, W* base) {
  GptWeightsT<W> w;
  w.blocks.resize(static_cast<size_t>(cfg.n_layer));
  for (int layer : table.layers()) {
    bind_gpt_layer(cfg, table, layer, base == nullptr ? nullptr : base + table.layer_range(layer).begin, &w);
  }
  return w;
}

template void bind_gpt_layer<float>(const GptConfig&, const ParamTable&, int, float*, GptWeightsT<float>*);
template void bind_gpt_layer<half_t>(const GptConfig&, const ParamTable&, int, half_t*, GptWeightsT<half_t>*);
template GptWeightsT<float> bind_gpt_weights<float>(const GptConfig&, const ParamTable&, float*);
template GptWeightsT<half_t> bind_gpt_weights<half_t>(const GptConfig&, const ParamTable&, half_t*);

}  // namespace zt
