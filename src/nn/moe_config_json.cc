// The "moe" JSON object; see moe_config_json.h.
#include "nn/moe_config_json.h"

namespace zt {

Json moe_config_json(const MoeConfig& m) {
  const MoeGateOptions& g = m.gate;
  Json j = {{"num_experts", m.num_experts},
            {"num_experts_per_tok", g.k},
            {"moe_intermediate_size", m.intermediate_size},
            {"decoder_sparse_step", m.every},
            {"router_aux_loss_coef", m.aux_loss_coef},
            {"routing", g.routing == MoeRouting::kMixtral ? "mixtral" : "deepspeed"}};
  if (m.use_residual) j["use_residual"] = true;
  if (m.shared_intermediate_size > 0) {
    j["shared_expert_intermediate_size"] = m.shared_intermediate_size;
    j["shared_expert_gate"] = m.shared_expert_gate;
  }
  if (g.routing == MoeRouting::kMixtral) {
    j["norm_topk_prob"] = g.renormalize;
    return j;
  }
  j.update({{"capacity_factor", g.capacity_factor},
            {"eval_capacity_factor", m.eval_capacity_factor},
            {"min_capacity", g.min_capacity},
            {"drop_tokens", g.drop_tokens},
            {"use_rts", g.use_rts},
            {"noisy_gate_policy", g.rsample ? Json("RSample") : Json(nullptr)},
            {"top2_2nd_expert_sampling", g.second_sampling},
            {"drop_policy", g.drop_policy == MoeDropPolicy::kProbs ? "probs" : "position"}});
  return j;
}

namespace {

void read_deepspeed_gate(JsonReader& r, MoeConfig* m) {
  MoeGateOptions& g = m->gate;
  g.capacity_factor = r.number("capacity_factor", 1.0, 1e-6, 1e6);
  m->eval_capacity_factor = r.number("eval_capacity_factor", g.capacity_factor, 1e-6, 1e6);
  g.min_capacity = static_cast<int>(r.integer("min_capacity", 4, 0, 1 << 30));
  g.drop_tokens = r.boolean("drop_tokens", true);
  g.use_rts = r.boolean("use_rts", true);
  const std::string noise = r.choice("noisy_gate_policy", "None", {"None", "Jitter", "RSample"});
  if (noise == "Jitter") r.fail("noisy_gate_policy", "\"Jitter\" (multiplicative input noise) is not built; use None or RSample");
  g.rsample = noise == "RSample";
  g.second_sampling = r.boolean("top2_2nd_expert_sampling", true);
  g.drop_policy = r.choice("drop_policy", "probs", {"probs", "position"}) == "probs" ? MoeDropPolicy::kProbs
                                                                                       : MoeDropPolicy::kPosition;
}

}  // namespace

void read_moe_config(JsonReader& r, MoeConfig* m) {
  *m = MoeConfig{};
  const bool mixtral = r.choice("routing", "deepspeed", {"deepspeed", "mixtral"}) == "mixtral";
  m->gate.routing = mixtral ? MoeRouting::kMixtral : MoeRouting::kDeepSpeed;
  m->num_experts = static_cast<int>(r.integer("num_experts", 0, 1, 1 << 16));
  if (!r.has("num_experts")) r.fail("num_experts", "is missing: the experts of each MoE block");
  m->gate.k = static_cast<int>(r.integer("num_experts_per_tok", mixtral ? 2 : 1, 1, 1 << 16));
  m->intermediate_size = static_cast<int>(r.integer("moe_intermediate_size", 0, 0, 1 << 24));
  m->every = static_cast<int>(r.integer("decoder_sparse_step", 1, 1, 1 << 16));
  m->aux_loss_coef = r.number("router_aux_loss_coef", 0.0, 0.0, 1e6);
  m->use_residual = r.boolean("use_residual", false);
  m->shared_intermediate_size = static_cast<int>(r.integer("shared_expert_intermediate_size", 0, 0, 1 << 24));
  m->shared_expert_gate = r.boolean("shared_expert_gate", true);
  if (mixtral) {
    m->gate.renormalize = r.boolean("norm_topk_prob", true);
    m->gate.drop_tokens = false;
    m->gate.use_rts = m->gate.second_sampling = false;
  } else {
    read_deepspeed_gate(r, m);
  }
}

}  // namespace zt
