// A family's tensor names: the one place where GPT-2's and Llama's HuggingFace names live.
// The model's tensors are defined by role (nn/gpt_params.h); a ParamNames maps each role to
// the name the family's HF checkpoints use, without the module prefix (hf_prefix: GPT-2's
// "transformer.", Llama's "model."). Every role has a name in every table; a config's
// knobs decide which roles exist (a fused qkv, or q, k, v; an up projection for SwiGLU;
// biases, experts). Adding a family adds a table here.
#pragma once

#include <string>

#include "nn/gpt_config.h"

namespace zt {

struct ParamNames {
  const char* hf_prefix;  // the HF module prefix of every name but lm_head
  const char* embed;      // token embedding (also the tied LM head)
  const char* positions;  // learned position table
  const char* block;      // block prefix, followed by the block index and "."
  const char* norm1;      // the attention's input norm
  const char* qkv;        // fused q, k, v projection
  const char* q;
  const char* k;
  const char* v;
  const char* attn_out;   // attention output projection
  const char* norm2;      // the MLP's input norm
  const char* mlp_in;     // GELU's input projection, or SwiGLU's gate
  const char* mlp_up;     // SwiGLU's up projection
  const char* mlp_out;    // the MLP's output projection
  const char* norm_f;     // the final norm
  const char* lm_head;    // an untied LM head
  // An MoE block's MLP (nn/moe_config.h): the router, then expert j's projections under
  // experts + "j.": Mixtral's block_sparse_moe.gate and experts.j.w1 / w3 / w2 for
  // Llama, Qwen2-MoE's mlp.gate and mlp.experts.j.gate_proj / up_proj / down_proj.
  const char* moe_router;
  const char* experts;
  const char* expert_in;
  const char* expert_up;
  const char* expert_out;
  // The dense MLP beside the experts (its projections are named as an expert's) and the
  // linear that mixes it in (Qwen2-MoE's shared_expert and shared_expert_gate).
  const char* shared;
  const char* shared_gate;
};

const ParamNames& param_names(ModelFamily family);

// "h.3." / "layers.3.": block `layer`'s name prefix.
std::string block_prefix(const ParamNames& names, int layer);

}  // namespace zt
