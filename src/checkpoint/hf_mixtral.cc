// HuggingFace Mixtral's differences from Llama; see hf_mixtral.h.
#include "checkpoint/hf_mixtral.h"

#include <algorithm>

#include "nn/param_names.h"

namespace zt {

namespace {

// config.json says model_type `type`, or (without model_type) lists `architecture`.
bool hf_is(const Json& j, const char* type, const char* architecture) {
  const auto t = j.find("model_type");
  if (t != j.end() && t->is_string()) return t->get<std::string>() == type;
  const auto arch = j.find("architectures");
  if (arch == j.end() || !arch->is_array()) return false;
  return std::any_of(arch->begin(), arch->end(),
                     [&](const Json& a) { return a.is_string() && a.get<std::string>() == architecture; });
}

}  // namespace

bool hf_is_mixtral(const Json& j) { return hf_is(j, "mixtral", "MixtralForCausalLM"); }
bool hf_is_qwen2_moe(const Json& j) { return hf_is(j, "qwen2_moe", "Qwen2MoeForCausalLM"); }

std::vector<std::string> hf_mixtral_moe_tensors(const GptConfig& m) {
  const ParamNames& n = param_names(m.family());
  // MixtralBlockSparseTop2MLP registers w1, w2, w3; Qwen2MoeMLP gate, up, down.
  const bool qwen = m.family() == ModelFamily::kQwen2;
  const std::vector<const char*> order = qwen ? std::vector<const char*>{n.expert_in, n.expert_up, n.expert_out}
                                              : std::vector<const char*>{n.expert_in, n.expert_out, n.expert_up};
  std::vector<std::string> out{std::string(n.moe_router) + ".weight"};
  for (int j = 0; j < m.moe.num_experts; ++j) {
    const std::string e = n.experts + std::to_string(j) + ".";
    for (const char* t : order) out.push_back(e + t + ".weight");
  }
  if (!qwen) return out;
  for (const char* t : order) out.push_back(std::string(n.shared) + t + ".weight");
  out.push_back(std::string(n.shared_gate) + ".weight");
  return out;
}

Json hf_mixtral_config_fields(const GptConfig& m) {
  if (m.family() == ModelFamily::kQwen2) {
    return {{"num_experts", m.moe.num_experts},
            {"num_experts_per_tok", m.moe.k()},
            {"moe_intermediate_size", m.expert_width()},
            {"shared_expert_intermediate_size", m.moe.shared_intermediate_size},
            {"decoder_sparse_step", m.moe.every},
            {"mlp_only_layers", Json::array()},
            {"norm_topk_prob", m.moe.gate.renormalize},
            {"router_aux_loss_coef", m.moe.aux_loss_coef},
            {"output_router_logits", m.moe.aux_loss_coef > 0.0}};
  }
  return {{"num_local_experts", m.moe.num_experts},
          {"num_experts_per_tok", m.moe.k()},
          {"router_aux_loss_coef", m.moe.aux_loss_coef},
          {"output_router_logits", m.moe.aux_loss_coef > 0.0},
          {"router_jitter_noise", 0.0},
          {"sliding_window", nullptr}};
}

void read_hf_mixtral_fields(JsonReader& r, GptConfig* m) {
  MoeConfig& moe = m->moe;
  const bool qwen = m->family() == ModelFamily::kQwen2;
  moe.gate.routing = MoeRouting::kMixtral;
  moe.gate.drop_tokens = moe.gate.use_rts = moe.gate.second_sampling = false;
  moe.gate.renormalize = qwen ? r.boolean("norm_topk_prob", false) : true;
  if (qwen) {
    moe.intermediate_size = static_cast<int>(r.integer("moe_intermediate_size", 1408, 1, 1 << 24));
    moe.shared_intermediate_size = static_cast<int>(r.integer("shared_expert_intermediate_size", 5632, 1, 1 << 24));
    moe.every = static_cast<int>(r.integer("decoder_sparse_step", 1, 1, 1 << 16));
    const Json* only = r.raw("mlp_only_layers");
    if (only != nullptr && !(only->is_array() && only->empty())) {
      r.fail("mlp_only_layers", "is not empty; zerotrain places experts by decoder_sparse_step only");
    }
  }
  moe.num_experts = static_cast<int>(r.integer(qwen ? "num_experts" : "num_local_experts", qwen ? 60 : 8, 1, 1 << 16));
  moe.gate.k = static_cast<int>(r.integer("num_experts_per_tok", qwen ? 4 : 2, 1, 1 << 16));
  const double coef = r.number("router_aux_loss_coef", 0.001, 0.0, 1e6);
  moe.aux_loss_coef = r.boolean("output_router_logits", false) ? coef : 0.0;
  if (!qwen && r.number("router_jitter_noise", 0.0, 0.0, 1e6) != 0.0) {
    r.fail("router_jitter_noise", "is not 0; zerotrain's Mixtral routing takes no jitter");
  }
  if (!qwen && r.raw("sliding_window") != nullptr) {
    r.fail("sliding_window", "is set; zerotrain's attention is full causal attention (no sliding window)");
  }
}

Status check_mixtral_export(const GptConfig& m) {
  const MoeConfig& moe = m.moe;
  std::string why;
  if (m.family() == ModelFamily::kQwen2) {
    if (moe.gate.routing != MoeRouting::kMixtral) why = "its routing is not Qwen2-MoE's (softmax top-k)";
    else if (moe.shared_intermediate_size == 0 || !moe.shared_expert_gate) why = "Qwen2-MoE has a gated shared expert";
    if (why.empty()) return Status::OK();
    return Status::InvalidArgument("export: this MoE model is not a Qwen2MoeForCausalLM: " + why);
  }
  if (m.family() != ModelFamily::kLlama) why = "only the Llama family's MoE model is a MixtralForCausalLM";
  else if (moe.gate.routing != MoeRouting::kMixtral || !moe.gate.renormalize) why = "its routing is not Mixtral's (softmax top-k, renormalised)";
  else if (moe.every != 1) why = "Mixtral has experts in every layer (decoder_sparse_step 1)";
  else if (m.expert_width() != m.mlp_width()) why = "Mixtral's experts are intermediate_size wide";
  else if (moe.has_shared()) why = "Mixtral has no dense MLP beside its experts";
  if (why.empty()) return Status::OK();
  return Status::InvalidArgument("export: this MoE model is not a Mixtral: " + why);
}

}  // namespace zt
