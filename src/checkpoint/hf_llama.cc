// HuggingFace Llama export and import; see hf_llama.h.
#include "checkpoint/hf_llama.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <set>

#include "checkpoint/hf_mixtral.h"
#include "checkpoint/model_json.h"
#include "io/atomic_file.h"
#include "io/filesystem.h"
#include "io/json_reader.h"
#include "nn/gpt_params.h"
#include "nn/param_names.h"

namespace zt {

namespace {

// Decoder layer l's tensors in HF's state-dict order (LlamaDecoderLayer registers
// self_attn, mlp (Mixtral: block_sparse_moe), input_layernorm, post_attention_layernorm),
// named by the model's name table; each linear's bias follows its weight when the config
// has one.
std::vector<std::string> layer_tensors(const GptConfig& m, int l) {
  const ParamNames& n = param_names(m.family());
  std::vector<std::string> out;
  auto add = [&](const char* module, bool bias) {
    out.push_back(std::string(module) + ".weight");
    if (bias) out.push_back(std::string(module) + ".bias");
  };
  for (const char* t : {n.q, n.k, n.v}) add(t, m.qkv_bias);
  add(n.attn_out, m.out_bias);
  if (m.moe_block(l)) {
    for (const std::string& t : hf_mixtral_moe_tensors(m)) out.push_back(t);
  } else {
    for (const char* t : {n.mlp_in, n.mlp_up, n.mlp_out}) add(t, m.mlp_bias);
  }
  for (const char* t : {n.norm1, n.norm2}) add(t, false);
  return out;
}

// The HF class of a Llama-style family: Llama, or Qwen2 (Llama with q/k/v biases).
struct HfArch {
  const char* model_type;
  const char* architecture;
};

HfArch hf_arch(ModelFamily f, bool moe) {
  if (moe && f == ModelFamily::kQwen2) return HfArch{"qwen2_moe", "Qwen2MoeForCausalLM"};
  if (moe) return HfArch{"mixtral", "MixtralForCausalLM"};
  return f == ModelFamily::kQwen2 ? HfArch{"qwen2", "Qwen2ForCausalLM"} : HfArch{"llama", "LlamaForCausalLM"};
}

bool is_vocab_tensor(const std::string& zt_name) { return zt_name == "embed_tokens.weight" || zt_name == "lm_head.weight"; }

// model.layers.N.self_attn.rotary_emb.inv_freq: a buffer old conversions stored, not a weight.
bool is_inv_freq(const std::string& name) {
  return name.starts_with("model.layers.") && name.ends_with(".self_attn.rotary_emb.inv_freq");
}

// zerotrain's name of a HF tensor name ("" when it has none).
std::string zt_name_of(const std::string& hf) {
  if (hf == "lm_head.weight") return hf;
  if (hf.starts_with("model.") && hf != "model.lm_head.weight") return hf.substr(6);
  return "";
}

int need_int(JsonReader& r, const char* key, int hi) {
  if (!r.has(key)) r.fail(key, "is missing");
  return static_cast<int>(r.integer(key, 1, 1, hi));
}

void check_architecture(JsonReader& r, const HfArch& want) {
  const std::string type = r.string("model_type", "");
  const std::vector<std::string> arch = r.strings("architectures");
  if (!type.empty() && type != want.model_type) {
    r.fail("model_type", "is \"" + type + "\"; this reader takes model_type \"" + want.model_type + "\"");
  } else if (type.empty() && std::find(arch.begin(), arch.end(), want.architecture) == arch.end()) {
    r.fail("architectures", std::string("names no ") + want.architecture + ", and model_type is missing");
  }
}

// rope_theta and scaling: v4's rope_theta + rope_scaling, or v5's rope_parameters.
void read_rope(JsonReader& r, GptConfig* c) {
  c->rope_theta = r.number("rope_theta", 10000.0, 1e-30, 1e300);
  if (std::optional<JsonReader> s = r.object("rope_scaling")) {
    read_rope_scaling(*s, &c->rope_scaling);
    s->done();
  } else if (std::optional<JsonReader> p = r.object("rope_parameters")) {
    c->rope_theta = p->number("rope_theta", c->rope_theta, 1e-30, 1e300);
    if (p->has("rope_type") || p->has("type")) read_rope_scaling(*p, &c->rope_scaling);
    p->done();
  }
}

// What config.json may say that zerotrain's Llama cannot compute.
void check_refusals(JsonReader& r, const GptConfig& c) {
  const std::string act = r.string("hidden_act", "silu");
  if (act != "silu") r.fail("hidden_act", "is \"" + act + "\"; zerotrain's Llama MLP is SwiGLU with silu");
  if (r.has("head_dim")) {
    const int64_t hd = r.integer("head_dim", 0, 1, 1 << 20);
    if (r.status().ok() && (c.n_embd % c.n_head != 0 || hd != c.n_embd / c.n_head)) {
      r.fail("head_dim", std::to_string(hd) + " is not hidden_size / num_attention_heads = " + std::to_string(c.n_embd) +
                             " / " + std::to_string(c.n_head) + "; zerotrain's attention has no separate head_dim");
    }
  }
  if (r.boolean("rope_interleaved", false)) {
    r.fail("rope_interleaved", "is true; zerotrain's rotary embedding rotates halves (HF's rotate_half), not pairs");
  }
}

// The tied head a file may carry anyway must be embed_tokens itself.
Status check_tied_head(const HfWeights& w, const HfModel& m) {
  const TensorSpec& e = m.table.at(m.table.find("embed_tokens.weight"));
  std::vector<float> head(e.numel);
  ZT_RETURN_IF_ERROR(w.read_f32("lm_head.weight", e.shape, head.data()));
  if (std::memcmp(head.data(), m.params.data() + e.offset, e.numel * sizeof(float)) != 0) {
    return Status::InvalidArgument(w.file_of("lm_head.weight") + ": tensor lm_head.weight differs from "
                                   "model.embed_tokens.weight, but config.json says tie_word_embeddings: true");
  }
  return Status::OK();
}

Status read_weights(const HfWeights& w, HfModel* m) {
  const bool tied = m->config.tie_word_embeddings;
  std::set<std::string> seen;
  for (const std::string& name : w.names()) {
    if (is_inv_freq(name) || (tied && name == "lm_head.weight")) continue;
    const std::string zt = zt_name_of(name);
    const int idx = zt.empty() ? -1 : m->table.find(zt);
    if (idx < 0) {
      return Status::InvalidArgument(w.file_of(name) + ": tensor " + name + " is not part of the " + hf_arch(m->config.family(), m->config.moe.enabled()).architecture + " that " +
                                     w.config_path() + " describes");
    }
    const TensorSpec& s = m->table.at(idx);
    ZT_RETURN_IF_ERROR(w.read_f32(name, s.shape, m->params.data() + s.offset));
    seen.insert(zt);
  }
  for (const HfName& n : hf_llama_names(m->config)) {
    if (seen.count(n.zt) == 0) return Status::InvalidArgument(w.label() + ": tensor " + n.hf + " is missing");
  }
  if (tied && w.has("lm_head.weight")) return check_tied_head(w, *m);
  return Status::OK();
}

}  // namespace

std::vector<HfName> hf_llama_names(const GptConfig& m) {
  std::vector<HfName> out{{"model.embed_tokens.weight", "embed_tokens.weight"}};
  for (int i = 0; i < m.n_layer; ++i) {
    for (const std::string& t : layer_tensors(m, i)) {
      const std::string zt = "layers." + std::to_string(i) + "." + t;
      out.push_back({"model." + zt, zt});
    }
  }
  out.push_back({"model.norm.weight", "norm.weight"});
  if (!m.tie_word_embeddings) out.push_back({"lm_head.weight", "lm_head.weight"});
  return out;
}

Json hf_llama_config_json(const GptConfig& m, StDType dtype) {
  Json j = llama_fields_json(m);
  const HfArch arch = hf_arch(m.family(), m.moe.enabled());
  Json rest = {{"architectures", {arch.architecture}},
               {"model_type", arch.model_type},
               {"hidden_size", m.n_embd},
               {"num_hidden_layers", m.n_layer},
               {"num_attention_heads", m.n_head},
               {"head_dim", m.head_size()},
               {"hidden_act", "silu"},
               {"max_position_embeddings", m.n_positions},
               {"vocab_size", m.vocab_size},
               {"rope_scaling", rope_scaling_json(m.rope_scaling)},
               {"attention_bias", m.qkv_bias},
               {"attention_dropout", 0.0},
               {"mlp_bias", m.mlp_bias},
               {"initializer_range", 0.02},
               {"pretraining_tp", 1},
               {"use_cache", true},
               {"torch_dtype", hf_torch_dtype(dtype)}};
  if (m.family() == ModelFamily::kQwen2) {  // Qwen2Config: no bias keys, no sliding window
    for (const char* k : {"attention_bias", "mlp_bias", "pretraining_tp"}) rest.erase(k);
    rest["use_sliding_window"] = false;
    rest["sliding_window"] = nullptr;
    rest["max_window_layers"] = m.n_layer;
  }
  if (m.moe.enabled()) {  // MixtralConfig, Qwen2MoeConfig: no bias keys
    for (const char* k : {"attention_bias", "mlp_bias", "pretraining_tp"}) rest.erase(k);
    rest.update(hf_mixtral_config_fields(m));
  }
  j.update(rest);
  return j;
}

Status export_hf_llama(const GptConfig& model, const ParamTable& table, const float* params, const std::string& dir,
                       const HfExportOptions& options) {
  ZT_CHECK(model.family() != ModelFamily::kGpt2, "export_hf_llama takes a Llama or Qwen2 model");
  if (model.moe.enabled()) ZT_RETURN_IF_ERROR(check_mixtral_export(model));
  if (model.family() == ModelFamily::kLlama && model.qkv_bias != model.out_bias) {
    return Status::InvalidArgument(std::string("export: LlamaConfig's attention_bias covers q, k, v and o together; "
                                               "this model has ") +
                                   (model.qkv_bias ? "q/k/v biases without an o_proj bias" : "an o_proj bias without q/k/v biases"));
  }
  const std::vector<HfName> names = hf_llama_names(model);
  ZT_CHECK(names.size() == table.specs().size(), "export takes a whole Llama model: %zu tensors, HF's state dict has %zu",
           table.specs().size(), names.size());
  std::vector<HfTensor> tensors;
  for (const HfName& n : names) {
    const int idx = table.find(n.zt);
    ZT_CHECK(idx >= 0, "the Llama table has no %s", n.zt.c_str());
    const TensorSpec& s = table.at(idx);
    ZT_CHECK(s.global_shape.empty(), "export takes a whole model, got a tp slice of %s", s.name.c_str());
    HfTensor t{n.hf, s.shape, params + s.offset};
    if (is_vocab_tensor(n.zt)) t.shape[0] = model.vocab_size;  // the padding rows stay behind
    tensors.push_back(std::move(t));
  }
  ZT_RETURN_IF_ERROR(make_dirs(dir));
  ZT_RETURN_IF_ERROR(write_hf_weights(dir, tensors, options));
  return write_file_atomic(dir + "/config.json", hf_llama_config_json(model, options.dtype).dump(2) + "\n");
}

StatusOr<GptConfig> parse_hf_llama_config(const Json& j, const std::string& label, ModelFamily family) {
  if (!j.is_object()) return Status::InvalidArgument(label + ": not a JSON object");
  JsonReader r(j, "");
  const bool moe = family == ModelFamily::kLlama ? hf_is_mixtral(j) : hf_is_qwen2_moe(j);
  check_architecture(r, hf_arch(family, moe));
  GptConfig c;
  c.set_family(family);
  if (moe) read_hf_mixtral_fields(r, &c);
  c.n_embd = need_int(r, "hidden_size", 1 << 20);
  c.intermediate_size = need_int(r, "intermediate_size", 1 << 24);
  c.n_layer = need_int(r, "num_hidden_layers", 1 << 16);
  c.n_head = need_int(r, "num_attention_heads", 1 << 16);
  c.vocab_size = need_int(r, "vocab_size", 1 << 30);
  c.n_positions = static_cast<int>(r.integer("max_position_embeddings", 2048, 1, 1 << 24));
  c.n_kv_head = static_cast<int>(r.integer("num_key_value_heads", c.n_head, 1, 1 << 16));
  c.rms_norm_eps = static_cast<float>(r.number("rms_norm_eps", 1e-6, 1e-30, 1.0));
  c.tie_word_embeddings = r.boolean("tie_word_embeddings", false);
  if (family == ModelFamily::kLlama && !moe) read_llama_biases(r, &c);
  if (r.boolean("use_sliding_window", false)) {
    r.fail("use_sliding_window", "is true; zerotrain's attention is full causal attention (no sliding window)");
  }
  read_rope(r, &c);
  if (r.status().ok()) check_refusals(r, c);
  Status s = r.status();
  if (s.ok()) s = c.validate();
  if (!s.ok()) return Status::InvalidArgument(label + ": " + s.message());
  return c;
}

StatusOr<HfModel> read_hf_llama(const std::string& path, ModelFamily family) {
  ZT_ASSIGN_OR_RETURN(const HfWeights w, HfWeights::open(path));
  ZT_ASSIGN_OR_RETURN(const Json j, read_hf_config_json(w.config_path()));
  HfModel m;
  ZT_ASSIGN_OR_RETURN(m.config, parse_hf_llama_config(j, w.config_path(), family));
  m.table = build_gpt_param_table(m.config, GptLayout{});
  m.params.assign(m.table.numel(), 0.0f);
  ZT_RETURN_IF_ERROR(read_weights(w, &m));
  return m;
}

}  // namespace zt
