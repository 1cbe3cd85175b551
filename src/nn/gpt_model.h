// GptModel: GPT-2 forward and backward as an explicit list of layer calls (no tape).
//
// The model owns its activations; parameters and gradients live in arenas owned by the
// caller (the engine), laid out by param_table() and bound with bind(). Parameter
// gradients accumulate (+=), so gradient accumulation needs no extra work: the caller
// zeroes the gradient arena once per optimizer step.
//
// One micro-batch: forward(tokens) -> loss(targets) -> backward(tokens, targets, dloss).
// The stage-level calls (forward_block, backward_block, ...) are public so pipeline
// stages and ZeRO-3 parameter gathering can interleave their own work between layers.
// Thread-safety: one thread drives a model; kernels parallelise internally with OpenMP.
#pragma once

#include <cstdint>

#include "core/status.h"
#include "nn/gpt_activations.h"
#include "nn/gpt_config.h"
#include "nn/gpt_params.h"
#include "tensor/tensor_spec.h"

namespace zt {

struct LossSum {
  double sum = 0.0;   // sum of per-token losses over counted tokens
  int64_t count = 0;  // tokens whose target is not the ignore index
};

class GptModel {
 public:
  // config must be valid (GptConfig::validate); max_batch, max_seq > 0, max_seq <= n_positions.
  GptModel(const GptConfig& config, int max_batch, int max_seq);
  GptModel(const GptModel&) = delete;
  GptModel& operator=(const GptModel&) = delete;

  const GptConfig& config() const { return config_; }
  const ParamTable& param_table() const { return table_; }
  int max_batch() const { return max_batch_; }
  int max_seq() const { return max_seq_; }

  // Binds the full parameter and gradient arenas (table().numel() floats each); grads
  // may be null for forward-only use.
  void bind(float* params, float* grads);
  // Binds one layer (kEmbeddingLayer, a block, or n_layer for ln_f) to buffers holding
  // that layer's range of the arena: a ZeRO-3 gather buffer, a gradient bucket. Either
  // pointer may be null (unbound) when the next calls do not need it.
  void bind_layer(int layer, float* params_at, float* grads_at);

  // The parameter pointer bound for `layer` (its range begin), or null.
  float* bound_params(int layer) const;

  // Checks a batch before any kernel touches it: B, T within the allocation, tokens in
  // [0, vocab_size), targets in [0, vocab_size) or -1. targets may be null.
  Status validate_batch(const int32_t* tokens, const int32_t* targets, int B, int T) const;

  // Whole-model calls for one micro-batch of B x T tokens.
  void forward(const int32_t* tokens, int B, int T);
  LossSum loss(const int32_t* targets);  // after forward(); fills per-token losses
  // dloss: d(total loss)/d(each counted token's loss), e.g. 1 / tokens counted in the step.
  void backward(const int32_t* tokens, const int32_t* targets, float dloss);

  // Stage-level calls, in the order forward() and backward() use them.
  void forward_embedding(const int32_t* tokens, int B, int T);
  void forward_block(int layer);
  void forward_head();
  void backward_head(const int32_t* targets, float dloss);
  void backward_block(int layer);
  void backward_embedding(const int32_t* tokens);

  // (B, T, Vp) logits of the last forward; invalid after backward (reused for dlogits).
  const float* logits() const { return acts_.logits; }
  const GptActivations& activations() const { return acts_; }
  size_t activation_bytes() const { return acts_.arena.bytes(); }

 private:
  const float* block_input(int layer) const;

  GptConfig config_;
  ParamTable table_;
  int max_batch_;
  int max_seq_;
  GptWeights w_;   // bound parameter views
  GptWeights dw_;  // bound gradient views
  GptActivations acts_;
  int B_ = 0;  // shape of the current micro-batch
  int T_ = 0;
};

}  // namespace zt
