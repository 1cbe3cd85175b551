// GptLayout: the part of a GPT model one rank holds. A pipeline stage holds a run of
// transformer blocks, plus the embeddings if it is the first stage and the final norm with
// the LM head if it is the last (a tied LM head is the embedding matrix, so a last stage
// without the embeddings holds its own copy of it, kept equal to the first stage's by
// all-reducing their gradients). A tensor-parallel rank holds a 1/tp slice of every split
// weight (Megatron's layout: attention heads and kv heads, MLP columns, the vocabulary for
// the embedding and LM head) and whole copies of the others (norms, learned positions, the
// biases of row-parallel layers).
// The default layout is the whole model on one rank.
#pragma once

#include <string>

#include "core/status.h"
#include "nn/gpt_config.h"

namespace zt {

struct GptLayout {
  int first_block = 0;
  int end_block = -1;     // exclusive; -1 = n_layer
  bool embedding = true;  // the embedding (and learned positions) forward/backward
  bool head = true;       // the final norm and the LM head
  int tp_rank = 0;
  int tp_size = 1;

  int end(const GptConfig& c) const { return end_block < 0 ? c.n_layer : end_block; }
  bool owns_block(const GptConfig& c, int l) const { return l >= first_block && l < end(c); }
  // A last stage without the embeddings holds a tied model's embedding copy in an extra layer.
  bool has_tied_copy() const { return head && !embedding; }
  // InvalidArgument if the layout does not fit the model: an empty stage, or tp not
  // dividing the heads and the padded vocabulary.
  Status validate(const GptConfig& c) const;
};

// Layer id of a tied LM head's copy of the embedding on a last stage without the embeddings.
inline int tied_head_layer(const GptConfig& c) { return c.n_layer + 1; }

}  // namespace zt
