// GptConfig: a GPT-2-family model's shape, with HuggingFace GPT-2 names.
#pragma once

#include <cstdint>
#include <string>

#include "core/status.h"

namespace zt {

struct GptConfig {
  int n_layer = 12;
  int n_head = 12;
  int n_embd = 768;
  int vocab_size = 50257;
  int n_positions = 1024;
  // Rows of wte actually allocated; 0 means vocab_size. Padding rows are zero, get no
  // gradient and never enter the softmax, so padding never changes a result.
  int padded_vocab_size = 0;

  int padded_vocab() const { return padded_vocab_size > 0 ? padded_vocab_size : vocab_size; }
  int head_size() const { return n_embd / n_head; }

  // OK, or InvalidArgument naming the offending field (e.g. n_embd not divisible by n_head).
  Status validate() const;
  // Parameters excluding vocabulary padding (GPT-2 small: 124,439,808).
  int64_t num_parameters() const;
  // Training FLOPs per token at sequence length T (forward + backward, PaLM's count):
  // 6 x matmul weights (12 L C^2 + V C, the LM head included) + 12 L C T for attention.
  double flops_per_token(int T) const;
  std::string to_string() const;
  // The same model: every shape field equal (vocabulary padding aside).
  bool same_model(const GptConfig& other) const {
    return n_layer == other.n_layer && n_head == other.n_head && n_embd == other.n_embd &&
           vocab_size == other.vocab_size && n_positions == other.n_positions;
  }

  static GptConfig gpt2_small();
};

}  // namespace zt
