// The GPT-2 (HF GPT2LMHeadModel) and Llama (HF LlamaForCausalLM) name tables.
#include "nn/param_names.h"

namespace zt {

namespace {

// Roles a family's HF model lacks get names in its style, so any knob setting has a table
// (such a model trains and checkpoints; its HF export refuses it).
constexpr ParamNames kGpt2 = {"transformer.", "wte", "wpe", "h.", "ln_1", "attn.c_attn", "attn.q_proj", "attn.k_proj",
                              "attn.v_proj", "attn.c_proj", "ln_2", "mlp.c_fc", "mlp.c_up", "mlp.c_proj", "ln_f",
                              "lm_head", "mlp.gate", "mlp.experts.", "c_fc", "c_up", "c_proj",
                              "mlp.shared_expert.", "mlp.shared_expert_gate"};
constexpr ParamNames kLlama = {"model.", "embed_tokens", "embed_positions", "layers.", "input_layernorm",
                               "self_attn.qkv_proj", "self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj",
                               "self_attn.o_proj", "post_attention_layernorm", "mlp.gate_proj", "mlp.up_proj",
                               "mlp.down_proj", "norm", "lm_head", "block_sparse_moe.gate",
                               "block_sparse_moe.experts.", "w1", "w3", "w2",
                               "block_sparse_moe.shared_expert.", "block_sparse_moe.shared_expert_gate"};
constexpr ParamNames kQwen2 = {"model.", "embed_tokens", "embed_positions", "layers.", "input_layernorm",
                               "self_attn.qkv_proj", "self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj",
                               "self_attn.o_proj", "post_attention_layernorm", "mlp.gate_proj", "mlp.up_proj",
                               "mlp.down_proj", "norm", "lm_head", "mlp.gate", "mlp.experts.", "gate_proj", "up_proj",
                               "down_proj", "mlp.shared_expert.", "mlp.shared_expert_gate"};

}  // namespace

// Qwen2ForCausalLM uses LlamaForCausalLM's names (its q/k/v biases are ".bias" beside each
// weight); with experts, Qwen2MoeForCausalLM's, and Llama's are MixtralForCausalLM's.
const ParamNames& param_names(ModelFamily family) {
  return family == ModelFamily::kGpt2 ? kGpt2 : family == ModelFamily::kQwen2 ? kQwen2 : kLlama;
}

std::string block_prefix(const ParamNames& names, int layer) { return names.block + std::to_string(layer) + "."; }

}  // namespace zt
