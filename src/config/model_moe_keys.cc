// The model section's mixture-of-experts keys (nn/moe_config.h), in either of two forms:
// - "moe": {...}, the object of nn/moe_config_json.h (DeepSpeed's MoE layer arguments, or
//   routing "mixtral");
// - HuggingFace's flat config.json keys, Mixtral's (num_local_experts, num_experts_per_tok,
//   router_aux_loss_coef, output_router_logits) and Qwen2-MoE's (num_experts,
//   moe_intermediate_size, decoder_sparse_step, norm_topk_prob), which route as HF does
//   (softmax top-k, nothing dropped); they also adjust an MoE preset. As in HF, the
//   balance loss enters the objective only with output_router_logits; it is reported either
//   way.
// Qwen2-MoE's shared_expert_intermediate_size is its sigmoid-gated shared expert. Giving
// both forms is an error naming both. The object's ep_size (DeepSpeed's MoE argument) is
// a layout, not part of the model: it goes to the parallel section (ParallelConfig::ep),
// where zerotrain's own spelling is "parallel": {"ep": N} (for presets and HF's flat keys).
#include <string>

#include "config/sections.h"
#include "nn/moe_config_json.h"

namespace zt::config_sections {

namespace {

void parse_hf_moe_keys(JsonReader& r, GptConfig* m) {
  MoeConfig& moe = m->moe;
  const bool qwen = m->family() == ModelFamily::kQwen2;
  const char* experts = r.has("num_local_experts") ? "num_local_experts" : "num_experts";
  moe.gate.routing = MoeRouting::kMixtral;
  moe.gate.drop_tokens = moe.gate.use_rts = moe.gate.second_sampling = false;
  const bool preset = moe.enabled();  // an MoE preset's values are the defaults
  moe.num_experts = static_cast<int>(r.integer(experts, moe.num_experts, 1, 1 << 16));
  moe.gate.k = static_cast<int>(r.integer("num_experts_per_tok", preset ? moe.gate.k : qwen ? 4 : 2, 1, 1 << 16));
  moe.intermediate_size = static_cast<int>(r.integer("moe_intermediate_size", moe.intermediate_size, 0, 1 << 24));
  moe.every = static_cast<int>(r.integer("decoder_sparse_step", moe.every, 1, 1 << 16));
  moe.gate.renormalize = r.boolean("norm_topk_prob", preset ? moe.gate.renormalize : !qwen);  // Mixtral: always
  const double coef = r.number("router_aux_loss_coef", preset ? 0.02 : 0.001, 0.0, 1e6);
  moe.aux_loss_coef = r.boolean("output_router_logits", false) ? coef : 0.0;
  moe.shared_intermediate_size =
      static_cast<int>(r.integer("shared_expert_intermediate_size", moe.shared_intermediate_size, 0, 1 << 24));
}

}  // namespace

void parse_moe_keys(JsonReader& r, GptConfig* m, int* ep_size) {
  const bool hf = r.has("num_local_experts") || r.has("num_experts");
  if (r.has("num_local_experts") && r.has("num_experts")) {
    return r.fail("num_experts", "given together with its synonym \"num_local_experts\"; keep one");
  }
  if (std::optional<JsonReader> o = r.object("moe")) {
    if (hf) return r.fail("moe", "given together with HuggingFace's flat MoE keys; use one form");
    read_moe_config(*o, &m->moe);
    const int ep = static_cast<int>(o->integer("ep_size", 1, 1, 1 << 16));
    if (ep_size != nullptr && o->has("ep_size")) {
      if (*ep_size != 1 && *ep_size != ep) o->fail("ep_size", "contradicts /parallel/ep (" + std::to_string(*ep_size) + ")");
      *ep_size = ep;
    }
    o->done();
    return;
  }
  if (hf || m->moe.enabled()) parse_hf_moe_keys(r, m);  // an MoE preset takes HF's keys too
}

}  // namespace zt::config_sections
