// The "moe" object of a model's JSON (the config's model.moe, a checkpoint manifest's and
// config.json's model), one spelling for writing and reading, in HuggingFace's and
// DeepSpeed's names:
//   num_experts (HF num_local_experts / num_experts), num_experts_per_tok (k),
//   moe_intermediate_size, decoder_sparse_step, router_aux_loss_coef,
//   routing ("mixtral": softmax top-k, nothing dropped; "deepspeed": DeepSpeed's gate),
//   norm_topk_prob (mixtral routing: renormalise the top-k gates),
//   a dense MLP beside the experts: use_residual (DeepSpeed's PR-MoE), or
//   shared_expert_intermediate_size with shared_expert_gate (Qwen2-MoE's sigmoid-gated
//   shared expert; false: DeepSeek-MoE's plain sum),
//   and DeepSpeed's MoE layer arguments (deepspeed.moe.layer.MoE): capacity_factor,
//   eval_capacity_factor, min_capacity, drop_tokens, use_rts, noisy_gate_policy (null,
//   "Jitter", "RSample"), top2_2nd_expert_sampling, drop_policy ("probs", "position").
// Defaults are DeepSpeed's (k 1, capacity 1.0, min_capacity 4, drop_tokens, use_rts,
// second-expert sampling) for routing "deepspeed", Mixtral's (k 2, renormalised) for
// "mixtral". Errors name the JSON path and the allowed values.
#pragma once

#include "io/json_reader.h"
#include "nn/moe_config.h"

namespace zt {

// Every field, so a reader of this object rebuilds exactly `m` (enabled models only).
Json moe_config_json(const MoeConfig& m);
// Reads r (a "moe" object) into m; n_layer bounds decoder_sparse_step in validate().
void read_moe_config(JsonReader& r, MoeConfig* m);

}  // namespace zt
