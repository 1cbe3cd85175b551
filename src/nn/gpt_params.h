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

#include "nn/gpt_config.h"
#include "nn/gpt_layout.h"
#include "tensor/tensor_spec.h"

namespace zt {

struct BlockWeights {
  float* ln1w;      // (C)
  float* ln1b;      // (C)
  float* qkvw;      // (3C, C)
  float* qkvb;      // (3C)
  float* attprojw;  // (C, C)
  float* attprojb;  // (C)
  float* ln2w;      // (C)
  float* ln2b;      // (C)
  float* fcw;       // (4C, C)
  float* fcb;       // (4C)
  float* fcprojw;   // (C, 4C)
  float* fcprojb;   // (C)
};

struct GptWeights {
  float* wte = nullptr;  // (Vp, C), also the LM head
  float* wpe = nullptr;  // (n_positions, C)
  std::vector<BlockWeights> blocks;
  float* lnfw = nullptr;  // (C)
  float* lnfb = nullptr;  // (C)
};

// The table of the part `layout` holds of the model (config and layout must be valid;
// default: everything). Init: normal(0.02) for weights and embeddings,
// 0.02/sqrt(2 n_layer) for attn.c_proj and mlp.c_proj weights, zeros for biases, ones
// for LayerNorm weights; decay on 2-D tensors only. Tensor-parallel slices carry their
// global shape and cut (TensorSpec::tp_dim): c_attn and mlp.c_fc by rows (c_attn as Q,
// K, V blocks), attn.c_proj and mlp.c_proj weights by columns, wte by vocabulary rows.
ParamTable build_gpt_param_table(const GptConfig& config, const GptLayout& layout = GptLayout{});

// Points a GptWeights at `base`, an arena laid out by `table` (params or grads alike).
GptWeights bind_gpt_weights(const GptConfig& config, const ParamTable& table, float* base);

// Re-points only `layer`'s views (kEmbeddingLayer, a block, n_layer for ln_f, or
// tied_head_layer for a last stage's copy of wte) at
// `layer_base`, which holds that layer's range of the arena (table.layer_range(layer))
// — a ZeRO-3 gather buffer or a gradient bucket. null unbinds the layer.
void bind_gpt_layer(const ParamTable& table, int layer, float* layer_base, GptWeights* weights);

// Fills `params` (table.numel() floats) per each spec's InitKind. Each tensor draws from
// its own stream, seeded from (seed, tensor name), over its GLOBAL shape, and keeps the
// elements of its slice: every layout (pipeline stage, tensor-parallel rank, ZeRO
// shard) starts from exactly the values the whole model on one process would.
void init_params(const ParamTable& table, float* params, uint64_t seed);

// The same values as init_params, but only for the elements in `range`, written to
// `out` (range.size() floats): each rank of a sharded run initialises just its shard.
void init_params_range(const ParamTable& table, ElementRange range, float* out, uint64_t seed);

}  // namespace zt
