// Family dispatch for HuggingFace import and export; see hf_model.h.
#include "checkpoint/hf_model.h"

#include <filesystem>

#include "checkpoint/hf_gpt2.h"
#include "checkpoint/hf_llama.h"

namespace zt {

namespace {

StatusOr<ModelFamily> family_of(const Json& j, const std::string& label) {
  const auto type = j.find("model_type");
  if (type != j.end() && !type->is_null()) {
    const std::string t = type->is_string() ? type->get<std::string>() : type->dump();
    if (t == "gpt2") return ModelFamily::kGpt2;
    if (t == "llama" || t == "mixtral") return ModelFamily::kLlama;  // Mixtral: Llama with experts
    if (t == "qwen2" || t == "qwen2_moe") return ModelFamily::kQwen2;  // Qwen2-MoE: Qwen2 with experts
    return Status::InvalidArgument(label + ": /model_type is " + type->dump() +
                                   "; zerotrain imports \"gpt2\", \"llama\", \"mixtral\", \"qwen2\" and \"qwen2_moe\" models");
  }
  const auto arch = j.find("architectures");
  if (arch == j.end() || !arch->is_array()) return ModelFamily::kGpt2;
  for (const Json& a : *arch) {
    if (a.is_string() && (a.get<std::string>() == "LlamaForCausalLM" || a.get<std::string>() == "MixtralForCausalLM")) {
      return ModelFamily::kLlama;
    }
    if (a.is_string() && (a.get<std::string>() == "Qwen2ForCausalLM" || a.get<std::string>() == "Qwen2MoeForCausalLM")) {
      return ModelFamily::kQwen2;
    }
  }
  return ModelFamily::kGpt2;
}

}  // namespace

StatusOr<HfModel> read_hf_model(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return Status::NotFound(path + ": no such file or directory");
  const std::string config = hf_config_path(path);
  ZT_ASSIGN_OR_RETURN(const Json j, read_hf_config_json(config));
  ZT_ASSIGN_OR_RETURN(const ModelFamily family, family_of(j, config));
  return family == ModelFamily::kGpt2 ? read_hf_gpt2(path) : read_hf_llama(path, family);
}

namespace {

// HF's GPT2Config and LlamaConfig express their family's architecture only (Llama: any tie
// and its attention_bias / mlp_bias); a model with other knobs has no HF form.
Status check_hf_expressible(const GptConfig& m) {
  GptConfig preset = m;
  preset.set_family(m.family());
  const ModelFamily f = m.family();
  const bool biases = f == ModelFamily::kLlama ||  // attention_bias, mlp_bias: any
                      (m.qkv_bias == preset.qkv_bias && m.out_bias == preset.out_bias && m.mlp_bias == preset.mlp_bias);
  const bool same = m.norm == preset.norm && m.mlp == preset.mlp && m.positions == preset.positions &&
                    m.fused_qkv == preset.fused_qkv && m.scaled_residual_init == preset.scaled_residual_init &&
                    biases && (f != ModelFamily::kGpt2 || m.tie_word_embeddings);
  if (same) return Status::OK();
  const char* arch = f == ModelFamily::kLlama ? "LlamaForCausalLM's" : f == ModelFamily::kQwen2 ? "Qwen2ForCausalLM's"
                                                                                                 : "GPT2LMHeadModel's";
  return Status::InvalidArgument(std::string("export: this model's architecture knobs are not ") + arch +
                                 " (norm, MLP, positions, qkv layout, biases, tied head): HF has no form for it");
}

}  // namespace

Status export_hf_model(const GptConfig& model, const ParamTable& table, const float* params, const std::string& dir,
                       const HfExportOptions& options) {
  ZT_RETURN_IF_ERROR(check_hf_expressible(model));
  if (model.family() != ModelFamily::kGpt2) return export_hf_llama(model, table, params, dir, options);
  return export_hf_gpt2(model, table, params, dir, options);
}

}  // namespace zt
