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
// An interleaved pipeline rank (Megatron's virtual stages, issue 31) holds several chunks,
// runs of blocks with other ranks' blocks between them; a micro-batch's forward walks one
// chunk at a time (ChunkPart). The first chunk of the first rank has the embeddings, the
// last chunk of the last rank the head.
// The default layout is the whole model on one rank.
#pragma once

#include <string>
#include <vector>

#include "core/status.h"
#include "nn/gpt_config.h"

namespace zt {

struct BlockRange {
  int begin = 0, end = 0;  // [begin, end)
};

// What one chunk's walk visits.
struct ChunkPart {
  int begin = 0, end = 0;  // its blocks
  bool embedding = false;  // it starts with the embeddings (else from a received input)
  bool head = false;       // it ends with the final norm and the head (else sends its output)
};

struct GptLayout {
  int first_block = 0;
  int end_block = -1;     // exclusive; -1 = n_layer; with chunks, the first's begin and the last's end
  bool embedding = true;  // the embedding (and learned positions) forward/backward
  bool head = true;       // the final norm and the LM head
  int tp_rank = 0;
  int tp_size = 1;
  int ep_rank = 0;
  int ep_size = 1;
  int sp_rank = 0;
  int sp_size = 1;

  // Interleaved pipelines: the chunks, ascending and disjoint; empty: one chunk
  // [first_block, end). Set with set_chunks.
  std::vector<BlockRange> chunks;

  int end(const GptConfig& c) const { return end_block < 0 ? c.n_layer : end_block; }
  void set_chunks(std::vector<BlockRange> ranges);
  int chunk_count() const { return chunks.empty() ? 1 : static_cast<int>(chunks.size()); }
  std::vector<BlockRange> block_ranges(const GptConfig& c) const;
  std::vector<int> blocks(const GptConfig& c) const;  // every block held, ascending
  ChunkPart chunk(const GptConfig& c, int j) const;
  bool owns_block(const GptConfig& c, int l) const;
  bool holds_every_block(const GptConfig& c) const { return chunk_count() == 1 && first_block == 0 && end(c) == c.n_layer; }
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
