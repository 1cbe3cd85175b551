// The model's parameter table and typed views into a flat arena, one definition for every
// configuration: the config's knobs decide which tensors exist, its family's name table
// (nn/param_names.h) names them.
//
// Order (each layer contiguous, HuggingFace order; GPT-2's names / Llama's): embedding
// (Vp, C) wte / embed_tokens, learned positions (n_positions, C) wpe; per block: norm1
// ln_1 / input_layernorm (C, plus a bias for LayerNorm), the fused qkv (3C, C) c_attn or
// q (C, C), k (KV, C), v (KV, C) with optional biases, attn_out (C, C) c_proj / o_proj,
// norm2, mlp_in (I, C) c_fc / gate_proj, for SwiGLU mlp_up (I, C) up_proj, mlp_out (C, I)
// c_proj / down_proj, each weight followed by its bias when the config has one; then the
// final norm and an untied lm_head (Vp, C). Linear weights use nn.Linear's (out, in)
// layout; GPT-2's HF Conv1D (in, out) layout is a transpose applied only at export/import.
//
// Layer ids: kEmbeddingLayer (embedding and positions), blocks 0..n_layer-1, n_layer for
// the head (final norm, plus lm_head when untied), and tied_head_layer for a tied model's
// copy of the embedding on a last pipeline stage without the embeddings.
#pragma once

#include <cstdint>
#include <vector>

#include "backend/backend.h"
#include "tensor/dtype.h"
#include "nn/gpt_config.h"
#include "nn/gpt_layout.h"
#include "tensor/tensor_spec.h"
#include "nn/param_init.h"  // init_params*, for the table's users

namespace zt {

// Views of one block's tensors, by role; a tensor the config lacks stays null. W is the
// element type (float for fp32 parameters and every gradient, half_t for a 16-bit copy).
// One expert MLP of an MoE block (the dense MLP's roles; up for SwiGLU only).
template <typename W>
struct ExpertWeightsT {
  W* in_w = nullptr;   // (Ie, C)
  W* in_b = nullptr;   // (Ie)
  W* up_w = nullptr;   // (Ie, C)
  W* out_w = nullptr;  // (C, Ie)
  W* out_b = nullptr;  // (C)
};

template <typename W>
struct BlockWeightsT {
  W* norm1_w = nullptr;  // (C)
  W* norm1_b = nullptr;  // (C) LayerNorm
  W* qkv_w = nullptr;    // (3C, C) fused
  W* qkv_b = nullptr;    // (3C)
  W* q_w = nullptr;      // (C, C) separate
  W* q_b = nullptr;
  W* k_w = nullptr;      // (KV, C)
  W* k_b = nullptr;
  W* v_w = nullptr;      // (KV, C)
  W* v_b = nullptr;
  W* attn_out_w = nullptr;  // (C, C)
  W* attn_out_b = nullptr;  // (C)
  W* norm2_w = nullptr;
  W* norm2_b = nullptr;
  W* mlp_in_w = nullptr;   // (I, C) c_fc, or SwiGLU's gate
  W* mlp_in_b = nullptr;
  W* mlp_up_w = nullptr;   // (I, C) SwiGLU only
  W* mlp_up_b = nullptr;
  W* mlp_out_w = nullptr;  // (C, I)
  W* mlp_out_b = nullptr;  // (C)
  // An MoE block (config.moe_block(l)) has these in place of the mlp_* tensors.
  W* router_w = nullptr;                   // (E, C)
  std::vector<ExpertWeightsT<W>> experts;  // E
  ExpertWeightsT<W> shared;                // the dense MLP beside them (moe.has_shared())
  W* shared_gate_w = nullptr;              // (1, C) gated shared expert, (2, C) PR-MoE coefficient
  W* shared_gate_b = nullptr;              // (2) PR-MoE
};

template <typename W>
struct GptWeightsT {
  W* embed = nullptr;      // (Vp, C)
  W* positions = nullptr;  // (n_positions, C) learned positions only
  std::vector<BlockWeightsT<W>> blocks;
  W* norm_f_w = nullptr;   // (C)
  W* norm_f_b = nullptr;   // (C) LayerNorm
  W* lm_head = nullptr;    // (Vp, C); == embed (or its tied copy) when tied
};

using BlockWeights = BlockWeightsT<float>;
using GptWeights = GptWeightsT<float>;

// The table of the part `layout` holds of the model (config and layout must be valid;
// default: everything). Init: normal(0.02) for weights and embeddings (padding rows zero),
// 0.02/sqrt(2 n_layer) for attn_out and mlp_out under scaled_residual_init, zeros for
// biases, ones for norm weights; decay on 2-D tensors only. Tensor-parallel slices carry
// their global shape and cut (TensorSpec::tp_dim): qkv (as Q, K, V blocks), q, k, v,
// mlp_in and mlp_up by rows (whole heads and kv heads per rank), attn_out and mlp_out
// weights by columns, the embedding and an untied lm_head by vocabulary rows.
ParamTable build_gpt_param_table(const GptConfig& config, const GptLayout& layout = GptLayout{});

// Points a GptWeights at `base`, an arena laid out by `table` (params or grads alike).
// W: float or half_t (instantiated for both).
template <typename W>
GptWeightsT<W> bind_gpt_weights(const GptConfig& config, const ParamTable& table, W* base);

// Re-points only `layer`'s views (kEmbeddingLayer, a block, n_layer for the head, or
// tied_head_layer for a last stage's copy of the embedding) at
// `layer_base`, which holds that layer's range of the arena (table.layer_range(layer))
// — a ZeRO-3 gather buffer or a gradient bucket. null unbinds the layer.
template <typename W>
void bind_gpt_layer(const GptConfig& config, const ParamTable& table, int layer, W* layer_base,
                    GptWeightsT<W>* weights);

}  // namespace zt
