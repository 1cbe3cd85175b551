// HuggingFace Mixtral interop (issue 30): MixtralForCausalLM is the Llama of hf_llama.h
// with every decoder layer's MLP a sparse MoE block (block_sparse_moe.gate, a bias-free
// (E, C) router, and block_sparse_moe.experts.{j}.w1 / w2 / w3, SwiGLU experts of width
// intermediate_size). zerotrain's model is the Llama family with the MoE knob: experts in
// every block, Mixtral's routing (softmax top-k renormalised, nothing dropped), experts as
// wide as intermediate_size. This file holds what differs from Llama: the layer's tensor
// names, config.json's MoE keys (num_local_experts, num_experts_per_tok,
// router_aux_loss_coef, output_router_logits; router_jitter_noise and a sliding window are
// refused), and the export's refusal of MoE models Mixtral's files cannot describe.
// Qwen2MoeForCausalLM is the same for the Qwen2 family: mlp.gate, mlp.experts.{j}.gate_proj
// / up_proj / down_proj (moe_intermediate_size wide), mlp.shared_expert.* and
// mlp.shared_expert_gate, with Qwen2MoeConfig's keys (num_experts, norm_topk_prob,
// shared_expert_intermediate_size, decoder_sparse_step; mlp_only_layers must be empty).
#pragma once

#include <string>
#include <vector>

#include "io/json_reader.h"
#include "nn/gpt_config.h"

namespace zt {

// config.json describes a Mixtral (model_type "mixtral", or MixtralForCausalLM), or a
// Qwen2-MoE (model_type "qwen2_moe", or Qwen2MoeForCausalLM).
bool hf_is_mixtral(const Json& config);
bool hf_is_qwen2_moe(const Json& config);
// An MoE block's tensors after its attention, in HF's state-dict order (gate, then per
// expert w1, w2, w3), relative to the layer.
std::vector<std::string> hf_mixtral_moe_tensors(const GptConfig& m);
// config.json's MoE keys for `m` (an MoE model the export accepts).
Json hf_mixtral_config_fields(const GptConfig& m);
// Reads config.json's MoE keys into m->moe.
void read_hf_mixtral_fields(JsonReader& r, GptConfig* m);
// OK, or why Mixtral's files cannot hold this MoE model.
Status check_mixtral_export(const GptConfig& m);

}  // namespace zt
