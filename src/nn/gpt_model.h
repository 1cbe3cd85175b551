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
// set_slot() picks whose activations the next calls use, and on an interleaved pipeline
// rank which chunk of the layout they walk (part()); a slot holds one chunk's activations
// at a time.
// Calls that communicate (tensor parallelism) return a Status; with tp = 1 they cannot fail.
// Every computation goes through the kernel table of the Backend in the options (the
// CPU f32 backend by default); activations are an arena that backend allocates.
// Thread-safety: one thread drives a model; kernels parallelise internally.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "backend/backend.h"
#include "comm/process_group.h"
#include "core/status.h"
#include "nn/gpt_config.h"
#include "kernels/moe_gate.h"
#include "nn/activation_stash.h"
#include "nn/block_route.h"
#include "nn/gpt_layout.h"
#include "nn/gpt_params.h"
#include "tensor/tensor_spec.h"

namespace zt {

// Per block: the bits of the inputs of its four linear slots (0: not quantized): qkv (or
// q, k, v), the attention output projection, fc (or gate and up), the MLP output projection.
using BlockActBits = std::array<int, 4>;

struct LossSum {
  double sum = 0.0;   // sum of per-token losses over counted tokens
  int64_t count = 0;  // tokens whose target is not the ignore index
};

struct GptModelOptions {
  GptLayout layout;
  const Backend* backend = nullptr;  // the device and kernel table; null = cpu_backend()
  ProcessGroup* tp = nullptr;  // the tensor-parallel group (size layout.tp_size); null when tp = 1
  ProcessGroup* ep = nullptr;  // the expert-parallel group (size layout.ep_size); null when ep = 1
  ProcessGroup* sp = nullptr;  // the sequence-parallel group (size layout.sp_size); null when sp = 1
  int max_batch = 1;
  int max_seq = 1;                    // this rank's tokens per sequence (the sequence / sp)
  int slots = 1;                      // micro-batches (of any chunk) in flight (pipeline stages)
  std::vector<bool> checkpoint;       // per global block: keep only its input, recompute in backward
  bool partition_activations = false; // with tp > 1: keep 1/tp of each checkpointed input
  ActivationStash* stash = nullptr;   // checkpointed inputs go here instead of the arena (must outlive the model)
  bool block_routing = false;         // set_routes() may route blocks (its scratch is allocated)
  bool flash_attention = false;       // attention saves each row's log-sum-exp, not T x T (the table's flash pair)
  bool shared_head = false;           // ArenaShape::shared_head
};

// The model's interface: what the engine drives. GptModel::create() builds the
// implementation for the backend's compute dtype (nn/gpt_model_impl.h: activations stored
// as float for f32, as half_t for bf16 and f16). Pointers to parameters and activations
// are untyped here; they hold the backend's compute dtype (activation_dtype()), while
// gradients are always fp32.
class GptModel {
 public:
  // config must be valid; the layout must fit it (GptLayout::validate); max_batch, max_seq
  // > 0, max_seq <= n_positions. A bf16/f16 backend supports tp = 1 only (the engine
  // refuses other layouts before building a model).
  static std::unique_ptr<GptModel> create(const GptConfig& config, const GptModelOptions& options);
  static std::unique_ptr<GptModel> create(const GptConfig& config, int max_batch, int max_seq);  // whole, one slot
  // OK, or the reason create() cannot build this model with these options (the layout does
  // not fit it, e.g. a tp that does not divide Llama's kv heads). create() aborts with this
  // message; callers that can report a Status check it first.
  static Status check_supported(const GptConfig& config, const GptModelOptions& options);
  virtual ~GptModel() = default;
  GptModel(const GptModel&) = delete;
  GptModel& operator=(const GptModel&) = delete;

  const GptConfig& config() const { return config_; }
  const GptLayout& layout() const { return options_.layout; }
  const ParamTable& param_table() const { return table_; }
  int max_batch() const { return options_.max_batch; }
  int max_seq() const { return options_.max_seq; }
  // The dtype of parameters bound with bind() and of activations (stage hand-offs, logits).
  DType activation_dtype() const { return backend_.compute_dtype(); }

  // Binds the full parameter arena (table().numel() elements of activation_dtype()) and the
  // fp32 gradient arena; grads may be null for forward-only use.
  virtual void bind(void* params, float* grads) = 0;
  // Binds one layer (kEmbeddingLayer, a block, n_layer for ln_f, tied_head_layer) to
  // buffers holding that layer's range of the arena: a ZeRO-3 gather buffer, a gradient
  // bucket. Either pointer may be null when the next calls do not need it.
  virtual void bind_layer(int layer, void* params_at, float* grads_at) = 0;
  // The parameter pointer bound for `layer` (its range begin), or null.
  virtual void* bound_params(int layer) const = 0;

  // Checks a batch before any kernel touches it: B, T within the allocation, tokens in
  // [0, vocab_size), targets in [0, vocab_size) or -1. tokens or targets may be null.
  Status validate_batch(const int32_t* tokens, const int32_t* targets, int B, int T) const;

  // Whole-model calls for one micro-batch of B x T tokens (the layout must hold it all).
  Status forward(const int32_t* tokens, int B, int T);
  // After forward() (the layout must hold the head): the micro-batch's loss into two doubles
  // of backend memory, out[0] = the sum over counted tokens, out[1] = their count
  // (KernelOps::loss_sum). The engine reads a step's worth in one copy.
  virtual Status loss_into(const int32_t* targets, double* out) = 0;
  // The same, read back at once (tests and tools): one copy per call.
  StatusOr<LossSum> loss(const int32_t* targets);
  // dloss: d(total loss)/d(each counted token's loss), e.g. 1 / tokens counted in the step.
  Status backward(const int32_t* tokens, const int32_t* targets, float dloss);

  // Routes for the current slot's next micro-batch, one per global block id (block_route.h;
  // empty: every block whole). Needs options.block_routing, and no partitioned or stashed
  // checkpoints on routed blocks; B x T is the micro-batch the routes are for.
  Status set_routes(std::vector<BlockRoute> routes, int B, int T);
  void clear_routes() { routes_.clear(); }  // every slot's blocks whole
  // DeepSpeed's dynamic activation quantization (compression_training): from the next
  // forward on, the input of each linear slot with bits > 0 is quantize-dequantized per
  // token (the table's fake_quant kernel, host memory only); null turns it off. `bits` must
  // outlive its use.
  void set_activation_quant(const std::vector<BlockActBits>* bits, bool symmetric) {
    act_bits_ = bits;
    act_symmetric_ = symmetric;
  }
  // The current slot's route of block `layer`, or null when it is whole.
  const BlockRoute* route(int layer) const;

  // Stage-level calls, in the order forward() and backward() use them. set_slot also picks
  // the layout's chunk the calls walk (0 unless interleaved).
  void set_slot(int slot, int chunk = 0);
  const ChunkPart& part() const { return part_; }
  virtual Status forward_embedding(const int32_t* tokens, int B, int T) = 0;
  void begin_stage(int B, int T);  // stages without the embeddings: shape of the input
  virtual Status forward_block(int layer) = 0;
  virtual Status forward_head() = 0;
  virtual Status backward_head(const int32_t* targets, float dloss) = 0;
  virtual Status backward_block(int layer) = 0;
  virtual void backward_embedding(const int32_t* tokens) = 0;

  // Pipeline hand-offs, (B, T, C) elements of activation_dtype() each: the input a stage
  // without the embeddings reads, the output a stage without the head sends, and the
  // gradient of that output it receives before backward (on exit from backward the same
  // buffer holds the gradient of the stage input, to send to the previous stage).
  virtual void* stage_input() = 0;
  virtual const void* stage_output() const = 0;
  virtual void* stage_output_grad() = 0;

  // Row `row` of the (B, T, Vl) logits of the last forward in this slot, widened to
  // fp32 into out (Vl floats); invalid after backward.
  virtual void logits_row(int64_t row, float* out) const = 0;
  virtual size_t activation_bytes() const = 0;
  virtual size_t saved_activation_bytes() const = 0;
  // MoE (nn/moe_config.h). The balance loss of the current slot's last forward, before its
  // coefficient: DeepSpeed's l_aux summed over this stage's MoE blocks, or HF's over them
  // (0 for a dense model). Each block's routing of that forward (indexed by global block;
  // empty for dense blocks and other stages).
  virtual double moe_aux_loss() const = 0;
  virtual const std::vector<MoeGateResult>& moe_routing() const = 0;
  // d(objective) / d(balance loss) for the next backward: the coefficient times the
  // micro-batch's weight in the step's objective (0: the loss only reports).
  void set_moe_aux_weight(float w) { moe_aux_weight_ = w; }
  // Forwards without a backward (evaluation) route with eval_capacity_factor.
  void set_moe_eval(bool eval) { moe_eval_ = eval; }
  // The key of the current slot's routing noise (DeepSpeed's random token selection,
  // RSample and top-2 second-expert sampling): block l draws from Rng(key, l), so a
  // recompute draws the same, and a micro-batch routes alike in every layout when the
  // engine keys it by its place in the global batch.
  void set_moe_noise_key(uint64_t key);

 protected:
  GptModel(const GptConfig& config, const GptModelOptions& options);
  void check_slot(int slot) const;

  GptConfig config_;
  GptModelOptions options_;
  const Backend& backend_;
  Arena loss_out_;  // loss()'s two doubles, allocated on its first call
  ParamTable table_;
  int slot_ = 0;
  ChunkPart part_;  // the current chunk
  int B_ = 0;  // shape of the current micro-batch
  int T_ = 0;
  std::vector<std::vector<BlockRoute>> routes_;  // per slot, per global block (empty: all whole)
  const std::vector<BlockActBits>* act_bits_ = nullptr;
  bool act_symmetric_ = true;
  float moe_aux_weight_ = 0.0f;
  bool moe_eval_ = false;
  std::vector<uint64_t> moe_noise_keys_;  // per slot
};

}  // namespace zt
