// GptActivations: what the forward saves for the backward, plus the backward's scratch,
// in one arena sized for the largest (B, T) the model will see. Smaller batches use a
// prefix of every buffer. Shapes below use B, T of the current call.
#pragma once

#include <cstddef>
#include <vector>

#include "nn/gpt_config.h"
#include "tensor/buffer.h"

namespace zt {

struct BlockActivations {
  float* ln1;       // (B, T, C)   LayerNorm 1 output, input of c_attn
  float* ln1_mean;  // (B, T)
  float* ln1_rstd;  // (B, T)
  float* qkv;       // (B, T, 3C)
  float* att;       // (B, NH, T, T) softmax probabilities P (causal; zeros above the diagonal)
  float* atty;      // (B, T, C)   attention output, input of attn.c_proj
  float* res2;      // (B, T, C)   residual after attention
  float* ln2;       // (B, T, C)
  float* ln2_mean;  // (B, T)
  float* ln2_rstd;  // (B, T)
  float* fch;       // (B, T, 4C)  c_fc output (GELU input)
  float* fch_gelu;  // (B, T, 4C)  GELU output, input of mlp.c_proj
  float* res3;      // (B, T, C)   residual after the MLP: the block's output
};

struct GptActivations {
  float* encoded;  // (B, T, C) embedding output, input of block 0
  std::vector<BlockActivations> blocks;
  float* lnf;       // (B, T, C)
  float* lnf_mean;  // (B, T)
  float* lnf_rstd;  // (B, T)
  float* logits;    // (B, T, Vp); overwritten in place by dlogits during backward
  float* losses;    // (B, T)
  float* xent_stats; // (B, T, 2) max and log-sum-exp per row, saved for the backward
  // Backward scratch, reused by every block.
  float* dresidual;  // (B, T, C) gradient flowing down the residual stream
  float* dln;        // (B, T, C) gradient of a LayerNorm output / of atty
  float* dqkv;       // (B, T, 3C)
  float* dfch;       // (B, T, 4C)

  size_t saved_bytes = 0;    // what the forward keeps for the backward
  size_t scratch_bytes = 0;  // backward scratch
  FloatBuffer arena;

  // Allocates for at most max_batch x max_seq tokens.
  static GptActivations allocate(const GptConfig& config, int max_batch, int max_seq);
};

}  // namespace zt
