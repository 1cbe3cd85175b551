// HuggingFace Mixtral's differences from Llama; see hf_mixtral.h.
#include "checkpoint/hf_mixtral.h"

#include <algorithm>

#include "nn/param_names.h"

namespace zt {

bool hf_is_mixtral(const Json& j) {
  const auto type = j.find("model_type");
  if (type != j.end() && type->is_string()) return type->get<std::string>() == "mixtral";
  const auto arch = j.find("architectures");
  if (arch == j.end() || !arch->is_array()) return false;
  return std::any_of(arch->begin(), arch->end(),
                     [](const Json& a) { return a.is_string() && a.get<std::string>() == "MixtralForCausalLM"; });
}

std::vector<std::string> hf_mixtral_moe_tensors(const GptConfig& m) {
  const ParamNames& n = param_names(m.family());
  std::vector<std::string> out{std::string(n.moe_router) + ".weight"};
  for (int j = 0; j < m.moe.num_experts; ++j) {
    const std::string e = n.experts + std::to_string(j) + ".";
    for (const char* t : {n.expert_in, n.expert_out, n.expert_up}) out.push_back(e + t + ".weight");
  }
  return out;
}

Json hf_mixtral_config_fields(const GptConfig& m) {
  return {{"num_local_experts", m.moe.num_experts},
          {"num_experts_per_tok", m.moe.k()},
          {"router_aux_loss_coef", m.moe.aux_loss_coef},
          {"output_router_logits", m.moe.aux_loss_coef > 0.0},
          {"router_jitter_noise", 0.0},
          {"sliding_window", nullptr}};
}

void read_hf_mixtral_fields(JsonReader& r, GptConfig* m) {
  MoeConfig& moe = m->moe;
  moe.gate.routing = MoeRouting::kMixtral;
  moe.gate.drop_tokens = moe.gate.use_rts = moe.gate.second_sampling = false;
  moe.gate.renormalize = true;
  moe.num_experts = static_cast<int>(r.integer("num_local_experts", 8, 1, 1 << 16));
  moe.gate.k = static_cast<int>(r.integer("num_experts_per_tok", 2, 1, 1 << 16));
  const double coef = r.number("router_aux_loss_coef", 0.001, 0.0, 1e6);
  moe.aux_loss_coef = r.boolean("output_router_logits", false) ? coef : 0.0;
  if (r.number("router_jitter_noise", 0.0, 0.0, 1e6) != 0.0) {
    r.fail("router_jitter_noise", "is not 0; zerotrain's Mixtral routing takes no jitter");
  }
  if (r.raw("sliding_window") != nullptr) {
    r.fail("sliding_window", "is set; zerotrain's attention is full causal attention (no sliding window)");
  }
}

Status check_mixtral_export(const GptConfig& m) {
  const MoeConfig& moe = m.moe;
  std::string why;
  if (m.family() != ModelFamily::kLlama) why = "only the Llama family's MoE model is a MixtralForCausalLM";
  else if (moe.gate.routing != MoeRouting::kMixtral || !moe.gate.renormalize) why = "its routing is not Mixtral's (softmax top-k, renormalised)";
  else if (moe.every != 1) why = "Mixtral has experts in every layer (decoder_sparse_step 1)";
  else if (m.expert_width() != m.mlp_width()) why = "Mixtral's experts are intermediate_size wide";
  else if (moe.has_shared()) why = "Mixtral has no dense MLP beside its experts";
  if (why.empty()) return Status::OK();
  return Status::InvalidArgument("export: this MoE model is not a Mixtral: " + why);
}

}  // namespace zt
