// GptConfig: a decoder-only transformer's shape and architecture knobs, in the manner of
// Megatron core's TransformerConfig. The knobs (norm, mlp, positions, fused_qkv, biases,
// kv heads, a tied or untied head, the residual init) define the model; GPT-2 and Llama are
// presets of them (set_family), and the family names only their HuggingFace tensor names
// (nn/param_names.h), config keys and import/export. Shape fields use HF GPT-2's names:
// n_layer, n_head, n_embd, vocab_size, n_positions are Llama's num_hidden_layers,
// num_attention_heads, hidden_size, vocab_size, max_position_embeddings.
// Invariant: validate() holds before a model is built; it refuses knob combinations the
// model does not compute (rotary positions on a fused qkv projection, grouped-query
// attention on a fused one), naming the field.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"
#include "nn/moe_config.h"

namespace zt {

// The preset and HuggingFace name table a config came from; never an architecture switch.
enum class ModelFamily { kGpt2, kLlama, kQwen2 };
// "gpt2", "llama", "qwen2": the family's name in configs, manifests and HF's model_type.
const char* family_name(ModelFamily f);
// The family family_name(f) names; GPT-2 for any other string (callers validate the choice).
ModelFamily family_of_name(const std::string& name);
enum class NormKind { kLayerNorm, kRmsNorm };     // LayerNorm carries a bias; RMSNorm uses rms_norm_eps
enum class MlpKind { kGelu, kSwiGlu };            // tanh-GELU(in(x)), or silu(gate(x)) * up(x)
enum class PositionKind { kLearned, kRotary };    // a wpe table added to the embedding, or RoPE on q and k

// HF rope_scaling (modeling_rope_utils.py): changes only the rotary inverse frequencies.
// type "" is none; "linear" divides every frequency by factor; "llama3" (Llama 3.1/3.2)
// keeps high frequencies, divides low ones by factor and interpolates between.
struct RopeScaling {
  std::string type;
  double factor = 1.0;
  double low_freq_factor = 1.0;
  double high_freq_factor = 4.0;
  int original_max_position_embeddings = 8192;
  bool operator==(const RopeScaling&) const = default;
};

struct GptConfig {
  int n_layer = 12;
  int n_head = 12;
  int n_embd = 768;
  int vocab_size = 50257;
  int n_positions = 1024;
  // Rows of the embedding actually allocated; 0 means vocab_size. Padding rows are zero, get
  // no gradient and never enter the softmax, so padding never changes a result.
  int padded_vocab_size = 0;
  // Architecture knobs (GPT-2's values by default; set_family applies a preset's).
  NormKind norm = NormKind::kLayerNorm;
  MlpKind mlp = MlpKind::kGelu;
  PositionKind positions = PositionKind::kLearned;
  bool fused_qkv = true;             // one (3C, C) projection (c_attn), or q, k, v with kv heads
  bool qkv_bias = true;              // biases on the q, k, v projections (HF Qwen2: true)
  bool out_bias = true;              // a bias on the attention output projection
  bool mlp_bias = true;              // biases on the MLP projections (HF LlamaConfig.mlp_bias)
  bool tie_word_embeddings = true;   // the LM head is the embedding matrix
  bool scaled_residual_init = true;  // output projections init with std 0.02 / sqrt(2 n_layer)
  int intermediate_size = 0;         // the MLP width; 0 = 4 n_embd
  int n_kv_head = 0;                 // num_key_value_heads; 0 = n_head (MHA), 1 = MQA
  float rms_norm_eps = 1e-5f;        // RMSNorm only (LayerNorm's eps is the kernel's 1e-5)
  double rope_theta = 10000.0;       // rotary only
  RopeScaling rope_scaling{};        // rotary only
  MoeConfig moe{};                   // experts in place of the MLP of some blocks (nn/moe_config.h)

  ModelFamily family() const { return family_; }
  // The family's preset knobs: GPT-2 (LayerNorm, GELU, learned positions, fused qkv with
  // biases, tied head, scaled init), Llama (RMSNorm, SwiGLU, rotary, separate q/k/v, no
  // biases, untied head as HF LlamaConfig defaults) or Qwen2 (Llama's, plus q/k/v biases).
  // Shape fields are left as they are.
  void set_family(ModelFamily f);

  int padded_vocab() const { return padded_vocab_size > 0 ? padded_vocab_size : vocab_size; }
  int head_size() const { return n_embd / n_head; }
  int kv_heads() const { return n_kv_head > 0 ? n_kv_head : n_head; }
  int kv_dim() const { return kv_heads() * head_size(); }  // rows of k_proj and v_proj
  int mlp_width() const { return intermediate_size > 0 ? intermediate_size : 4 * n_embd; }
  int expert_width() const { return moe.intermediate_size > 0 ? moe.intermediate_size : mlp_width(); }
  bool moe_block(int l) const { return moe.moe_block(l); }
  // The dense MLP beside an MoE block's experts: PR-MoE's is as wide as an expert.
  int shared_width() const { return moe.use_residual ? expert_width() : moe.shared_intermediate_size; }
  bool tied_head() const { return tie_word_embeddings; }
  bool rotary() const { return positions == PositionKind::kRotary; }
  bool swiglu() const { return mlp == MlpKind::kSwiGlu; }
  bool rms_norm() const { return norm == NormKind::kRmsNorm; }

  // RoPE's inv_freq[i], i < head_size()/2: 1 / rope_theta^(2i/head_size), then rope_scaling.
  std::vector<double> rope_inv_freq() const;

  // OK, or InvalidArgument naming the offending field (e.g. n_embd not divisible by n_head).
  Status validate() const;
  // Parameters of block l (an MoE block: its router and every expert), of the position
  // table, and of the whole model excluding vocabulary padding (GPT-2 small: 124,439,808).
  int64_t block_parameters(int l) const;
  int64_t position_parameters() const;
  int64_t num_parameters() const;
  // The parameters one token uses: num_parameters() less the experts it is not routed to
  // ((E - k) experts of each MoE block). Equal to num_parameters() for a dense model.
  int64_t active_parameters() const;
  // Block l's parameters one token uses (block_parameters(l) less its idle experts).
  int64_t block_active_parameters(int l) const;
  // Matmul weights one token goes through in block l (an MoE block: the router and k
  // experts); its work per token is 6x this in training.
  int64_t block_matmul_weights(int l) const;
  // Training FLOPs per token at sequence length T (forward + backward, PaLM's count):
  // 6 x active matmul weights (the LM head included, embedding lookups not) + 12 L C T for attention.
  double flops_per_token(int T) const;
  std::string to_string() const;
  // The same model: every shape field and knob equal (vocabulary padding aside).
  bool same_model(const GptConfig& other) const;

  static GptConfig gpt2_small();

 private:
  Status validate_rotary() const;
  int64_t expert_parameters() const;  // one expert MLP's
  int64_t shared_parameters() const;  // an MoE block's dense MLP beside the experts, with its gate
  int64_t attention_parameters() const;  // a block's norms and attention
  ModelFamily family_ = ModelFamily::kGpt2;
};

}  // namespace zt
