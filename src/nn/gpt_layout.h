// GptLayout: the part of a GPT model one rank holds. A pipeline stage holds a run of
// transformer blocks, plus the embeddings if it is the first stage and the final norm with
// the LM head if it is the last (a tied LM head is the embedding matrix, so a last stage
// without the embeddings holds its own copy of it, kept equal to the first stage's by
// all-reducing their gradients). A tensor-parallel rank holds a 1/tp slice of every split
// weight (Megatron's layout: attention heads and kv heads, MLP columns, the vocabulary for
// the embedding and LM head) and whole copies of the others (norms, learned positions, the
// biases of row-parallel layers).
// An expert-parallel rank (issue 30) holds the routed experts of its ep rank only,
// [ep_rank E/ep, (ep_rank + 1) E/ep) of every MoE block, and whole copies of the rest.
// A sequence-parallel rank (Ulysses, issue 31) holds the whole model and 1/sp of each
// sequence's tokens, positions [sp_rank T/sp, (sp_rank + 1) T/sp); its attention runs on
// the whole sequence for n_head/sp heads (nn/ulysses.h).
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
  int ep_rank = 0;
  int ep_size = 1;
  int sp_rank = 0;
  int sp_size = 1;

  int end(const GptConfig& c) const { return end_block < 0 ? c.n_layer : end_block; }
  bool owns_block(const GptConfig& c, int l) const { return l >= first_block && l < end(c); }
  // A last stage without the embeddings holds a tied model's embedding copy in an extra layer.
  bool has_tied_copy() const { return head && !embedding; }
  // The routed experts this rank holds: [first_expert, first_expert + local_experts).
  int local_experts(const GptConfig& c) const { return c.moe.num_experts / ep_size; }
  int first_expert(const GptConfig& c) const { return ep_rank * local_experts(c); }
  // The tokens of each sequence this rank holds, of a sequence of T.
  int local_seq(int T) const { return T / sp_size; }
  // InvalidArgument if the layout does not fit the model: an empty stage, tp not dividing
  // the heads and the padded vocabulary, ep not dividing the experts, sp not dividing the
  // heads; Unimplemented for sp with tp or experts.
  Status validate(const GptConfig& c) const;
  Status validate_sequence_parallel(const GptConfig& c) const;
};

// Layer id of a tied LM head's copy of the embedding on a last stage without the embeddings.
inline int tied_head_layer(const GptConfig& c) { return c.n_layer + 1; }

}  // namespace zt
