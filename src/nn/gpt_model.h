// GptModel: GPT-2 forward and backward as an explicit list of layer calls (no tape), for
// the part of the model this rank holds (GptLayout: a pipeline stage, a tensor-parallel
// slice, or everything).
//
// The model owns its activations; parameters and gradients live in arenas owned by the
// caller (the engine), laid out by param_table() and bound with bind()/bind_layer().
// Parameter gradients accumulate (+=), so gradient accumulation needs no extra work.
//
// One micro-batch: forward(tokens) -> loss(targets) -> backward(tokens, targets, dloss).
// The stage-level calls are public so pipeline stages and ZeRO-3 interleave their own
// work between layers. A pipeline stage without the embeddings starts with
// begin_stage(B, T) after writing the previous stage's output into stage_input(); one
// without the head finishes its backward from the gradient written into
// stage_output_grad(). Several micro-batches may be in flight (options.slots):
// set_slot() picks whose activations the next calls use.
// Calls that communicate (tensor parallelism) return a Status; with tp = 1 they cannot fail.
// Every computation goes through the kernel table of the Backend in the options (the
// CPU f32 backend by default); activations are an arena that backend allocates.
// Thread-safety: one thread drives a model; kernels parallelise internally.
#pragma once

#include <cstdint>
#include <vector>

#include "backend/backend.h"
#include "comm/process_group.h"
#include "core/status.h"
#include "nn/gpt_activations.h"
#include "nn/gpt_config.h"
#include "nn/gpt_layout.h"
#include "nn/gpt_params.h"
#include "tensor/tensor_spec.h"

namespace zt {

struct LossSum {
  double sum = 0.0;   // sum of per-token losses over counted tokens
  int64_t count = 0;  // tokens whose target is not the ignore index
};

struct GptModelOptions {
  GptLayout layout;
  const Backend* backend = nullptr;  // the device and kernel table; null = cpu_backend()
  ProcessGroup* tp = nullptr;  // the tensor-parallel group (size layout.tp_size); null when tp = 1
  int max_batch = 1;
  int max_seq = 1;
  int slots = 1;                      // micro-batches in flight (pipeline stages)
  std::vector<bool> checkpoint;       // per global block: keep only its input, recompute in backward
  bool partition_activations = false; // with tp > 1: keep 1/tp of each checkpointed input
};

class GptModel {
 public:
  // config must be valid; the layout must fit it (GptLayout::validate); max_batch, max_seq
  // > 0, max_seq <= n_positions.
  GptModel(const GptConfig& config, const GptModelOptions& options);
  GptModel(const GptConfig& config, int max_batch, int max_seq);  // the whole model, one slot
  GptModel(const GptModel&) = delete;
  GptModel& operator=(const GptModel&) = delete;

  const GptConfig& config() const { return config_; }
  const GptLayout& layout() const { return options_.layout; }
  const ParamTable& param_table() const { return table_; }
  int max_batch() const { return options_.max_batch; }
  int max_seq() const { return options_.max_seq; }

  // Binds the full parameter and gradient arenas (table().numel() floats each); grads
  // may be null for forward-only use.
  void bind(float* params, float* grads);
  // Binds one layer (kEmbeddingLayer, a block, n_layer for ln_f, tied_head_layer) to
  // buffers holding that layer's range of the arena: a ZeRO-3 gather buffer, a gradient
  // bucket. Either pointer may be null when the next calls do not need it.
  void bind_layer(int layer, float* params_at, float* grads_at);
  // The parameter pointer bound for `layer` (its range begin), or null.
  float* bound_params(int layer) const;

  // Checks a batch before any kernel touches it: B, T within the allocation, tokens in
  // [0, vocab_size), targets in [0, vocab_size) or -1. tokens or targets may be null.
  Status validate_batch(const int32_t* tokens, const int32_t* targets, int B, int T) const;

  // Whole-model calls for one micro-batch of B x T tokens (the layout must hold it all).
  Status forward(const int32_t* tokens, int B, int T);
  StatusOr<LossSum> loss(const int32_t* targets);  // after forward(); the layout must hold the head
  // dloss: d(total loss)/d(each counted token's loss), e.g. 1 / tokens counted in the step.
  Status backward(const int32_t* tokens, const int32_t* targets, float dloss);

  // Stage-level calls, in the order forward() and backward() use them.
  void set_slot(int slot);
  Status forward_embedding(const int32_t* tokens, int B, int T);
  void begin_stage(int B, int T);  // stages without the embeddings: shape of the input
  Status forward_block(int layer);
  Status forward_head();
  Status backward_head(const int32_t* targets, float dloss);
  Status backward_block(int layer);
  void backward_embedding(const int32_t* tokens);

  // Pipeline hand-offs, (B, T, C) each: the input a stage without the embeddings reads,
  // the output a stage without the head sends, and the gradient of that output it
  // receives before backward (on exit from backward the same buffer holds the gradient
  // of the stage input, to send to the previous stage).
  float* stage_input();
  const float* stage_output() const;
  float* stage_output_grad() { return arena_.scratch.dresidual; }

  // (B, T, Vl) logits of the last forward in this slot; invalid after backward.
  const float* logits() const { return slot().logits; }
  const GptActivations& activations() const { return slot(); }
  size_t activation_bytes() const { return arena_.arena.bytes(); }
  size_t saved_activation_bytes() const { return arena_.saved_bytes; }

 private:
  const GptActivations& slot() const { return arena_.slots[static_cast<size_t>(slot_)]; }
  GptActivations& slot() { return arena_.slots[static_cast<size_t>(slot_)]; }
  const float* block_input(int layer) const;
  Status block_forward(int layer, const float* res_in, const BlockActivations& a);
  Status recompute(int layer, const float** res_in);
  bool tp() const { return options_.layout.tp_size > 1; }

  GptConfig config_;
  GptModelOptions options_;
  const Backend& backend_;
  const KernelOps& k_;  // backend_.ops()
  ParamTable table_;
  GptWeights w_;   // bound parameter views
  GptWeights dw_;  // bound gradient views
  GptActivationArena arena_;
  int slot_ = 0;
  int B_ = 0;  // shape of the current micro-batch
  int T_ = 0;
};

}  // namespace zt
