// The Llama parameter table and typed views into a flat arena (config.is_llama()).
//
// Names are HuggingFace LlamaForCausalLM's without the "model." prefix, in its order, each
// layer contiguous: embed_tokens.weight (Vp, C); per block layers.i: input_layernorm.weight
// (C), self_attn.{q_proj (C, C), k_proj (KV, C), v_proj (KV, C), o_proj (C, C)}.weight,
// post_attention_layernorm.weight (C), mlp.{gate_proj (I, C), up_proj (I, C), down_proj
// (C, I)}.weight; then norm.weight (C) and, untied, lm_head.weight (Vp, C). KV = kv heads x
// head size. nn.Linear (out, in) layout, no biases.
//
// Layer ids follow GPT-2's: kEmbeddingLayer (embed_tokens), blocks 0..n_layer-1, n_layer
// for the head (norm, plus lm_head when untied: the head's parameters form one layer, as
// ln_f and the tied wte do for GPT-2), and tied_head_layer for a tied model's copy of
// embed_tokens on a last pipeline stage without the embeddings.
#pragma once

#include <vector>

#include "backend/dtype.h"
#include "nn/gpt_config.h"
#include "nn/gpt_layout.h"
#include "tensor/tensor_spec.h"

namespace zt {

template <typename W>
struct LlamaBlockWeightsT {
  W* in_norm;    // (C)    input_layernorm
  W* q;          // (C, C)
  W* k;          // (KV, C)
  W* v;          // (KV, C)
  W* o;          // (C, C)
  W* post_norm;  // (C)    post_attention_layernorm
  W* gate;       // (I, C)
  W* up;         // (I, C)
  W* down;       // (C, I)
};

template <typename W>
struct LlamaWeightsT {
  W* embed = nullptr;  // (Vp, C) embed_tokens; also the LM head when tied
  std::vector<LlamaBlockWeightsT<W>> blocks;
  W* norm = nullptr;     // (C) the final RMSNorm
  W* lm_head = nullptr;  // (Vp, C); == embed when tied
};

// The table of the part `layout` holds (config valid and Llama). Init: normal(0.02) for
// every matrix (padding rows of embed_tokens and lm_head zero), ones for the norms; decay
// on 2-D tensors only. With tp > 1 (layout.validate: tp divides the heads, the kv heads,
// intermediate_size and the padded vocabulary) q, k, v, gate, up, embed_tokens and lm_head
// are sliced by rows, o and down by columns; the norms are replicated.
ParamTable build_llama_param_table(const GptConfig& config, const GptLayout& layout = GptLayout{});

// Re-points `layer`'s views at layer_base (that layer's range of an arena laid out by
// table; null unbinds). W: float or half_t.
template <typename W>
void bind_llama_layer(const GptConfig& config, const ParamTable& table, int layer, W* layer_base,
                      LlamaWeightsT<W>* weights);

// Points every view at `base` (params or grads alike).
template <typename W>
LlamaWeightsT<W> bind_llama_weights(const GptConfig& config, const ParamTable& table, W* base);

}  // namespace zt
