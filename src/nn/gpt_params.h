// The GPT-2 parameter table and typed views into a flat arena.
//
// Order (each layer contiguous, HuggingFace order): wte (Vp, C), wpe (n_positions, C);
// per block h.i: ln_1.{weight,bias} (C), attn.c_attn.{weight (3C, C), bias (3C)},
// attn.c_proj.{weight (C, C), bias (C)}, ln_2.{weight,bias}, mlp.c_fc.{weight (4C, C),
// bias (4C)}, mlp.c_proj.{weight (C, 4C), bias (C)}; then ln_f.{weight,bias}.
// Linear weights use nn.Linear's (out, in) layout; HuggingFace's Conv1D (in, out) layout
// is a transpose applied only at export/import.
#pragma once

#include <cstdint>
#include <vector>

#include "backend/dtype.h"
#include "nn/gpt_config.h"
#include "nn/gpt_layout.h"
#include "tensor/tensor_spec.h"

namespace zt {

// Views of one block's tensors; W is the element type (float for fp32 parameters and for
// every gradient, half_t for a mixed-precision compute copy).
template <typename W>
struct BlockWeightsT {
  W* ln1w;      // (C)
  W* ln1b;      // (C)
  W* qkvw;      // (3C, C)
  W* qkvb;      // (3C)
  W* attprojw;  // (C, C)
  W* attprojb;  // (C)
  W* ln2w;      // (C)
  W* ln2b;      // (C)
  W* fcw;       // (4C, C)
  W* fcb;       // (4C)
  W* fcprojw;   // (C, 4C)
  W* fcprojb;   // (C)
};

template <typename W>
struct GptWeightsT {
  W* wte = nullptr;  // (Vp, C), also the LM head
  W* wpe = nullptr;  // (n_positions, C)
  std::vector<BlockWeightsT<W>> blocks;
  W* lnfw = nullptr;  // (C)
  W* lnfb = nullptr;  // (C)
};

using BlockWeights = BlockWeightsT<float>;
using GptWeights = GptWeightsT<float>;

// The table of the part `layout` holds of the model (config and layout must be valid;
// default: everything). Init: normal(0.02) for weights and embeddings,
// 0.02/sqrt(2 n_layer) for attn.c_proj and mlp.c_proj weights, zeros for biases, ones
// for LayerNorm weights; decay on 2-D tensors only. Tensor-parallel slices carry their
// global shape and cut (TensorSpec::tp_dim): c_attn and mlp.c_fc by rows (c_attn as Q,
// K, V blocks), attn.c_proj and mlp.c_proj weights by columns, wte by vocabulary rows.
// A Llama config (config.is_llama()) gets build_llama_param_table's table (nn/llama_params.h).
ParamTable build_gpt_param_table(const GptConfig& config, const GptLayout& layout = GptLayout{});

// Points a GptWeights at `base`, an arena laid out by `table` (params or grads alike).
// W: float or half_t (instantiated for both).
template <typename W>
GptWeightsT<W> bind_gpt_weights(const GptConfig& config, const ParamTable& table, W* base);

// Re-points only `layer`'s views (kEmbeddingLayer, a block, n_layer for ln_f, or
// tied_head_layer for a last stage's copy of wte) at
// `layer_base`, which holds that layer's range of the arena (table.layer_range(layer))
// — a ZeRO-3 gather buffer or a gradient bucket. null unbinds the layer.
template <typename W>
void bind_gpt_layer(const ParamTable& table, int layer, W* layer_base, GptWeightsT<W>* weights);

// Fills `params` (table.numel() floats) per each spec's InitKind. Each tensor draws from
// its own stream, seeded from (seed, tensor name), over its GLOBAL shape, and keeps the
// elements of its slice: every layout (pipeline stage, tensor-parallel rank, ZeRO
// shard) starts from exactly the values the whole model on one process would.
void init_params(const ParamTable& table, float* params, uint64_t seed);

// The same values as init_params, but only for the elements in `range`, written to
// `out` (range.size() floats): each rank of a sharded run initialises just its shard.
void init_params_range(const ParamTable& table, ElementRange range, float* out, uint64_t seed);

}  // namespace zt
