// MoeConfig: validation, description and equality; see moe_config.h.
#include "nn/moe_config.h"

#include <cstdio>

namespace zt {

Status MoeConfig::validate(int n_layer) const {
  if (num_experts < 0) {
    return Status::InvalidArgument("model.moe.num_experts: expected 0 (dense) or a positive count, got " +
                                   std::to_string(num_experts));
  }
  if (!enabled()) return Status::OK();
  if (gate.k < 1 || gate.k > num_experts) {
    return Status::InvalidArgument("model.moe.num_experts_per_tok: expected 1.." + std::to_string(num_experts) +
                                   ", got " + std::to_string(gate.k));
  }
  if (intermediate_size < 0) {
    return Status::InvalidArgument("model.moe.moe_intermediate_size: expected 0 (the MLP's width) or a positive width");
  }
  if (every < 1 || every > n_layer) {
    return Status::InvalidArgument("model.moe.decoder_sparse_step: expected 1.." + std::to_string(n_layer) +
                                   " (n_layer), got " + std::to_string(every));
  }
  if (!(gate.capacity_factor > 0.0) || !(eval_capacity_factor > 0.0) || gate.min_capacity < 0) {
    return Status::InvalidArgument("model.moe.capacity_factor / min_capacity: expected a positive factor and a "
                                   "non-negative minimum");
  }
  if (use_residual && shared_intermediate_size > 0) {
    return Status::InvalidArgument("model.moe.use_residual: a PR-MoE residual MLP and a shared expert "
                                   "(shared_expert_intermediate_size) do not combine; choose one");
  }
  if (shared_intermediate_size < 0) {
    return Status::InvalidArgument("model.moe.shared_expert_intermediate_size: expected 0 (none) or a width");
  }
  if (!(aux_loss_coef >= 0.0)) {
    return Status::InvalidArgument("model.moe.router_aux_loss_coef: expected a non-negative number");
  }
  return Status::OK();
}

MoeGateOptions MoeConfig::gate_for(bool eval) const {
  MoeGateOptions g = gate;
  if (eval) g.capacity_factor = eval_capacity_factor;
  return g;
}

MoeGateOptions MoeConfig::widest_gate() const { return gate_for(eval_capacity_factor > gate.capacity_factor); }

std::string MoeConfig::to_string(int width, int64_t active, int64_t total) const {
  if (!enabled()) return "";
  char buf[240];
  std::snprintf(buf, sizeof(buf),
                " moe: %d experts of width %d, top-%d (%s routing), every %d block(s), aux coef %g, %.2f M of %.2f M "
                "parameters active per token",
                num_experts, width, gate.k, gate.routing == MoeRouting::kMixtral ? "mixtral" : "deepspeed", every,
                aux_loss_coef, static_cast<double>(active) / 1e6, static_cast<double>(total) / 1e6);
  return buf;
}

bool MoeConfig::operator==(const MoeConfig& o) const {
  if (num_experts != o.num_experts) return false;
  if (!enabled()) return true;
  const MoeGateOptions &a = gate, &b = o.gate;
  const bool shape = a.routing == b.routing && a.k == b.k && intermediate_size == o.intermediate_size &&
                     every == o.every && aux_loss_coef == o.aux_loss_coef;
  if (!shape || use_residual != o.use_residual || shared_intermediate_size != o.shared_intermediate_size ||
      (shared_intermediate_size > 0 && shared_expert_gate != o.shared_expert_gate)) {
    return false;
  }
  if (a.routing == MoeRouting::kMixtral) return a.renormalize == b.renormalize;  // the only routing option it reads
  return a.capacity_factor == b.capacity_factor && eval_capacity_factor == o.eval_capacity_factor &&
         a.min_capacity == b.min_capacity && a.drop_tokens == b.drop_tokens && a.use_rts == b.use_rts &&
         a.rsample == b.rsample && a.second_sampling == b.second_sampling && a.drop_policy == b.drop_policy;
}

}  // namespace zt
