// MoeConfig: the mixture-of-experts knob of the one transformer model (issue 30). With
// num_experts > 0, the MLP of every `every`-th block (HF's decoder_sparse_step: block l
// when (l + 1) % every == 0) is E expert MLPs of the model's mlp kind and width
// intermediate_size (HF moe_intermediate_size; 0: the dense width), behind a router
// (E, C) linear without bias whose logits the gate (kernels/moe_gate.h) turns into each
// token's experts and weights. The other blocks keep the dense MLP.
// The balance loss: DeepSpeed's l_aux per MoE layer (routing kDeepSpeed), or HF's
// load_balancing_loss_func over every MoE layer of a forward (kMixtral); aux_loss_coef
// times it is added to each micro-batch's objective (HF router_aux_loss_coef; DeepSpeed
// users add coef * l_aux to their loss themselves).
// Invariant: validate() (through GptConfig::validate) holds before a model is built.
#pragma once

#include <cstdint>
#include <string>

#include "core/status.h"
#include "kernels/moe_gate.h"
#include "kernels/moe_ops.h"

namespace zt {

struct MoeConfig {
  int num_experts = 0;        // 0: every block dense
  int intermediate_size = 0;  // each expert's width; 0 = the dense MLP's
  int every = 1;              // decoder_sparse_step
  MoeGateOptions gate;        // routing, k (experts per token), capacity, drops, noise
  double eval_capacity_factor = 1.0;  // DeepSpeed's capacity in evaluation (forward without backward)
  double aux_loss_coef = 0.0;
  // A dense MLP beside the experts (kernels/moe_ops.h's MoeMix): DeepSpeed's use_residual
  // (PR-MoE: an MLP of the experts' width, mixed by a softmax over a (2, C) coefficient
  // linear with bias), or a shared expert of width shared_intermediate_size, gated by
  // sigmoid of a (1, C) linear (Qwen2-MoE) or added as it is (DeepSeek-MoE).
  bool use_residual = false;
  int shared_intermediate_size = 0;
  bool shared_expert_gate = true;

  bool enabled() const { return num_experts > 0; }
  bool moe_block(int l) const { return enabled() && (l + 1) % every == 0; }
  int k() const { return gate.k; }
  bool has_shared() const { return use_residual || shared_intermediate_size > 0; }
  MoeMix mix() const {
    return use_residual ? MoeMix::kResidual : shared_expert_gate ? MoeMix::kGatedShared : MoeMix::kShared;
  }
  // The gate's options in training or in evaluation (eval_capacity_factor).
  MoeGateOptions gate_for(bool eval) const;
  // The largest capacity factor either uses (what the expert buffers are sized for).
  MoeGateOptions widest_gate() const;
  // InvalidArgument naming the model.moe field; n_layer bounds `every`.
  Status validate(int n_layer) const;
  // " moe: ..." for GptConfig::to_string (empty when dense): width the experts' width,
  // active and total the model's parameter counts.
  std::string to_string(int width, int64_t active, int64_t total) const;
  bool operator==(const MoeConfig& o) const;
};

}  // namespace zt
