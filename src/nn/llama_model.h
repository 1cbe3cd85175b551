// LlamaModel: the Llama family (HF LlamaForCausalLM) behind the GptModel interface, fp32,
// the whole model on one rank. GptModel::create() builds it for config.is_llama() (after
// GptModel::check_supported). Internal to nn/: the engine sees GptModel only.
//
// Per block (pre-norm, no biases):
//   h   = x + o_proj(attn(rope(q_proj(n1)), rope(k_proj(n1)), v_proj(n1))),  n1 = RMSNorm(x)
//   out = h + down_proj(silu(gate_proj(n2)) * up_proj(n2)),                 n2 = RMSNorm(h)
// then the final RMSNorm and lm_head (or embed_tokens when tied).
//
// Grouped-query attention reuses the fused multi-head attention kernel: after RoPE, q, k and
// v are packed into the kernel's (B, T, 3C) layout with kv head g repeated n_rep = n_head /
// n_kv_head times (query head h reads kv head h / n_rep, HF repeat_kv). The backward runs
// the kernel's backward on that buffer and sums the n_rep gradients of each kv head back
// into its (B, T, KV) gradient. That costs the repeated k and v (2 (C - KV) per token) and
// the attention kernel's full work, nothing more.
// Thread-safety: as GptModel.
#pragma once

#include <vector>

#include "nn/gpt_model.h"
#include "nn/llama_params.h"

namespace zt {

// What the forward keeps for the backward, per block.
struct LlamaBlockActivations {
  float* n1 = nullptr;     // (B, T, C)   input_layernorm output
  float* rstd1 = nullptr;  // (B, T)
  float* qkv = nullptr;    // (B, T, 3C)  rotated q, rotated and repeated k, repeated v (attention input)
  float* att = nullptr;    // (B, NH, T, T) softmax probabilities
  float* atty = nullptr;   // (B, T, C)   attention output, o_proj input
  float* res2 = nullptr;   // (B, T, C)   residual after attention
  float* n2 = nullptr;     // (B, T, C)   post_attention_layernorm output
  float* rstd2 = nullptr;  // (B, T)
  float* gate = nullptr;   // (B, T, I)
  float* up = nullptr;     // (B, T, I)
  float* act = nullptr;    // (B, T, I)   silu(gate) * up, down_proj input
  float* res3 = nullptr;   // (B, T, C)   the block output
};

struct LlamaActivations {
  float* encoded = nullptr;  // (B, T, C) embedding output / stage input
  std::vector<LlamaBlockActivations> blocks;
  float* normed = nullptr;      // (B, T, C) final norm output
  float* rstdf = nullptr;       // (B, T)
  float* logits = nullptr;      // (B, T, Vp); dlogits in place during backward
  float* losses = nullptr;      // (B, T)
  float* xent_stats = nullptr;  // (B, T, 2)
};

class LlamaModel final : public GptModel {
 public:
  LlamaModel(const GptConfig& config, const GptModelOptions& options);

  void bind(void* params, float* grads) override;
  void bind_layer(int layer, void* params_at, float* grads_at) override;
  void* bound_params(int layer) const override;

  StatusOr<LossSum> loss(const int32_t* targets) override;
  Status forward_embedding(const int32_t* tokens, int B, int T) override;
  Status forward_block(int layer) override;
  Status forward_head() override;
  Status backward_head(const int32_t* targets, float dloss) override;
  Status backward_block(int layer) override;
  void backward_embedding(const int32_t* tokens) override;

  void* stage_input() override { return slot().encoded; }
  const void* stage_output() const override { return block_input(config_.n_layer); }
  void* stage_output_grad() override { return dres_; }
  void logits_row(int64_t row, float* out) const override;
  size_t activation_bytes() const override { return arena_.bytes(); }
  size_t saved_activation_bytes() const override { return saved_bytes_; }

 private:
  const LlamaActivations& slot() const { return slots_[static_cast<size_t>(slot_)]; }
  LlamaActivations& slot() { return slots_[static_cast<size_t>(slot_)]; }
  const float* block_input(int layer) const;

  const KernelOps& k_;
  LlamaWeightsT<float> w_;   // bound parameter views
  LlamaWeightsT<float> dw_;  // bound gradient views
  Arena arena_;
  size_t saved_bytes_ = 0;
  std::vector<LlamaActivations> slots_;
  float* freqs_ = nullptr;  // (max_seq, HD/2, 2) RoPE cos/sin
  // Backward scratch and forward temporaries, shared by all slots.
  float* dres_ = nullptr;  // (B, T, C) gradient on the residual stream
  float* dln_ = nullptr;   // (B, T, C)
  float* dtmp_ = nullptr;  // (B, T, C) a second input gradient, accumulated into dln_
  float* dqkv_ = nullptr;  // (B, T, 3C)
  float* q_ = nullptr;     // (B, T, C)  q before packing / dq
  float* k_tmp_ = nullptr;  // (B, T, KV) k before packing / dk
  float* v_tmp_ = nullptr;  // (B, T, KV) v before packing / dv
  float* dgate_ = nullptr;  // (B, T, I)
  float* dup_ = nullptr;    // (B, T, I)
  float* dact_ = nullptr;   // (B, T, I)
};

}  // namespace zt
