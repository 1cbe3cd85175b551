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

// The table for `config` (config must be valid). Init: normal(0.02) for weights and
// embeddings, 0.02/sqrt(2 n_layer) for attn.c_proj and mlp.c_proj weights, zeros for
// biases, ones for LayerNorm weights; decay on 2-D tensors only.
ParamTable build_gpt_param_table(const GptConfig& config);

// Points a GptWeights at `base`, an arena laid out by `table` (params or grads alike).
GptWeights bind_gpt_weights(const GptConfig& config, const ParamTable& table, float* base);

// Re-points only `layer`'s views (kEmbeddingLayer, a block, or n_layer for ln_f) at
// `layer_base`, which holds that layer's range of the arena (table.layer_range(layer))
// — a ZeRO-3 gather buffer or a gradient bucket. null unbinds the layer.
void bind_gpt_layer(const ParamTable& table, int layer, float* layer_base, GptWeights* weights);

// Fills `params` (table.numel() floats) per each spec's InitKind. Each tensor draws from
// its own stream, seeded from (seed, tensor index): the result is independent of threads
// and of which other tensors are initialised.
void init_params(const ParamTable& table, float* params, uint64_t seed);

// The same values as init_params, but only for the elements in `range`, written to
// `out` (range.size() floats): each rank of a sharded run initialises just its shard.
void init_params_range(const ParamTable& table, ElementRange range, float* out, uint64_t seed);

}  // namespace zt
