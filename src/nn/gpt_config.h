// GptConfig: a decoder-only model's shape, with HuggingFace GPT-2 names, plus the Llama
// family's fields (HuggingFace LlamaConfig names in the comments). `family` selects the
// architecture; the GPT-2 fields n_layer, n_head, n_embd, vocab_size, n_positions are
// num_hidden_layers, num_attention_heads, hidden_size, vocab_size, max_position_embeddings
// for Llama. The Llama fields are ignored by GPT-2.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"

namespace zt {

enum class ModelFamily { kGpt2, kLlama };

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
  ModelFamily family = ModelFamily::kGpt2;
  int n_layer = 12;
  int n_head = 12;
  int n_embd = 768;
  int vocab_size = 50257;
  int n_positions = 1024;
  // Rows of wte actually allocated; 0 means vocab_size. Padding rows are zero, get no
  // gradient and never enter the softmax, so padding never changes a result.
  int padded_vocab_size = 0;
  // Llama family only.
  int intermediate_size = 0;         // intermediate_size: the SwiGLU MLP width I
  int n_kv_head = 0;                 // num_key_value_heads; 0 = n_head (MHA), 1 = MQA
  float rms_norm_eps = 1e-5f;        // rms_norm_eps
  double rope_theta = 10000.0;       // rope_theta
  bool tie_word_embeddings = false;  // tie_word_embeddings: lm_head shares embed_tokens
  RopeScaling rope_scaling{};        // rope_scaling

  int padded_vocab() const { return padded_vocab_size > 0 ? padded_vocab_size : vocab_size; }
  int head_size() const { return n_embd / n_head; }
  bool is_llama() const { return family == ModelFamily::kLlama; }
  int kv_heads() const { return n_kv_head > 0 ? n_kv_head : n_head; }
  int kv_dim() const { return kv_heads() * head_size(); }  // rows of k_proj and v_proj
  // The LM head is the embedding matrix (always for GPT-2).
  bool tied_head() const { return !is_llama() || tie_word_embeddings; }

  // RoPE's inv_freq[i], i < head_size()/2: 1 / rope_theta^(2i/head_size), then rope_scaling.
  std::vector<double> rope_inv_freq() const;

  // OK, or InvalidArgument naming the offending field (e.g. n_embd not divisible by n_head).
  Status validate() const;
  // Parameters excluding vocabulary padding (GPT-2 small: 124,439,808).
  int64_t num_parameters() const;
  // Training FLOPs per token at sequence length T (forward + backward, PaLM's count):
  // 6 x matmul weights (GPT-2: 12 L C^2 + V C, the LM head included; Llama: q, k, v, o,
  // gate, up, down and the LM head) + 12 L C T for attention.
  double flops_per_token(int T) const;
  std::string to_string() const;
  // The same model: every shape field equal (vocabulary padding aside).
  bool same_model(const GptConfig& other) const {
    const bool gpt = n_layer == other.n_layer && n_head == other.n_head && n_embd == other.n_embd &&
                     vocab_size == other.vocab_size && n_positions == other.n_positions && family == other.family;
    if (!gpt || !is_llama()) return gpt;
    return intermediate_size == other.intermediate_size && kv_heads() == other.kv_heads() &&
           rms_norm_eps == other.rms_norm_eps && rope_theta == other.rope_theta &&
           tie_word_embeddings == other.tie_word_embeddings && rope_scaling == other.rope_scaling;
  }

  static GptConfig gpt2_small();
};

}  // namespace zt
