// A model's shape as JSON in HuggingFace's names; see model_json.h.
#include "checkpoint/model_json.h"

#include <charconv>

#include "nn/moe_config_json.h"

namespace zt {

namespace {

// A required key; absent keys are errors (JsonReader's getters take defaults).
int need_int(JsonReader& r, const char* key, int lo, int hi) {
  if (!r.has(key)) r.fail(key, "is missing");
  return static_cast<int>(r.integer(key, lo, lo, hi));
}

double need_number(JsonReader& r, const char* key, double lo, double hi) {
  if (!r.has(key)) r.fail(key, "is missing");
  return r.number(key, lo, lo, hi);
}

}  // namespace

Json float_json(float v) {
  char buf[64];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  double d = static_cast<double>(v);
  double shortest = 0.0;
  if (ec == std::errc() && std::from_chars(buf, end, shortest).ec == std::errc() && static_cast<float>(shortest) == v) {
    d = shortest;  // else the exact widening, which also reads back as v
  }
  return d;
}

Json rope_scaling_json(const RopeScaling& s) {
  if (s.type.empty()) return nullptr;
  if (s.type == "linear") return {{"rope_type", "linear"}, {"factor", s.factor}};
  return {{"rope_type", s.type},
          {"factor", s.factor},
          {"low_freq_factor", s.low_freq_factor},
          {"high_freq_factor", s.high_freq_factor},
          {"original_max_position_embeddings", s.original_max_position_embeddings}};
}

void read_rope_scaling(JsonReader& r, RopeScaling* s) {
  *s = RopeScaling{};
  const char* key = r.has("type") && !r.has("rope_type") ? "type" : "rope_type";
  if (!r.has(key)) return r.fail("rope_type", "is missing");
  const std::string type = r.string(key, "");
  if (type == "default") return;
  if (type != "linear" && type != "llama3") {
    return r.fail(key, "\"" + type + "\" is not supported: zerotrain's rotary embedding takes no scaling, "
                       "\"linear\" or \"llama3\"");
  }
  s->type = type;
  s->factor = need_number(r, "factor", 1.0, 1e6);
  if (type == "linear") return;
  s->low_freq_factor = need_number(r, "low_freq_factor", 1e-6, 1e6);
  s->high_freq_factor = need_number(r, "high_freq_factor", 1e-6, 1e6);
  s->original_max_position_embeddings = need_int(r, "original_max_position_embeddings", 1, 1 << 24);
}

Json llama_fields_json(const GptConfig& m) {
  Json j = {{"intermediate_size", m.intermediate_size},
            {"num_key_value_heads", m.kv_heads()},
            {"rms_norm_eps", float_json(m.rms_norm_eps)},
            {"rope_theta", m.rope_theta},
            {"tie_word_embeddings", m.tie_word_embeddings}};
  if (!m.rope_scaling.type.empty()) j["rope_scaling"] = rope_scaling_json(m.rope_scaling);
  // Llama's optional biases, written only when set (older files read unchanged); Qwen2's
  // q/k/v biases are its preset's.
  if (m.family() == ModelFamily::kLlama && m.qkv_bias) j["attention_bias"] = true;
  if (m.family() == ModelFamily::kLlama && m.mlp_bias) j["mlp_bias"] = true;
  return j;
}

void read_llama_biases(JsonReader& r, GptConfig* g) {
  g->qkv_bias = g->out_bias = r.boolean("attention_bias", false);
  g->mlp_bias = r.boolean("mlp_bias", false);
}

Json manifest_model_json(const GptConfig& m) {
  Json j = {{"n_layer", m.n_layer},
            {"n_head", m.n_head},
            {"n_embd", m.n_embd},
            {"vocab_size", m.vocab_size},
            {"n_positions", m.n_positions}};
  if (m.moe.enabled()) j["moe"] = moe_config_json(m.moe);
  if (m.family() == ModelFamily::kGpt2) return j;
  j["family"] = family_name(m.family());
  j.update(llama_fields_json(m));
  return j;
}

void read_manifest_model(JsonReader& r, GptConfig* g) {
  const std::string family = r.choice("family", "gpt2", {"gpt2", "llama", "qwen2"});
  g->set_family(family_of_name(family));
  g->n_layer = need_int(r, "n_layer", 1, 1 << 16);
  g->n_head = need_int(r, "n_head", 1, 1 << 16);
  g->n_embd = need_int(r, "n_embd", 1, 1 << 20);
  g->vocab_size = need_int(r, "vocab_size", 1, 1 << 30);
  g->n_positions = need_int(r, "n_positions", 1, 1 << 24);
  g->moe = MoeConfig{};
  if (std::optional<JsonReader> moe = r.object("moe")) {
    read_moe_config(*moe, &g->moe);
    moe->done();
  }
  if (g->family() == ModelFamily::kGpt2) return;  // Llama keys in a GPT-2 object stay unknown: refused
  g->intermediate_size = need_int(r, "intermediate_size", 1, 1 << 24);
  g->n_kv_head = need_int(r, "num_key_value_heads", 1, 1 << 16);
  // Written by float_json: the double read back narrows to the float written.
  g->rms_norm_eps = static_cast<float>(need_number(r, "rms_norm_eps", 1e-30, 1.0));
  g->rope_theta = need_number(r, "rope_theta", 1e-30, 1e300);
  if (!r.has("tie_word_embeddings")) r.fail("tie_word_embeddings", "is missing");
  g->tie_word_embeddings = r.boolean("tie_word_embeddings", false);
  g->rope_scaling = RopeScaling{};
  if (std::optional<JsonReader> s = r.object("rope_scaling")) {
    read_rope_scaling(*s, &g->rope_scaling);
    s->done();
  }
  if (g->family() == ModelFamily::kLlama) read_llama_biases(r, g);
}

Json config_model_json(const GptConfig& m) {
  if (m.family() == ModelFamily::kGpt2) {
    Json j = {{"n_layer", m.n_layer}, {"n_head", m.n_head}, {"n_embd", m.n_embd}, {"vocab_size", m.vocab_size},
              {"n_positions", m.n_positions}};
    if (m.moe.enabled()) j["moe"] = moe_config_json(m.moe);
    return j;
  }
  Json j = {{"family", family_name(m.family())},
            {"num_hidden_layers", m.n_layer},
            {"num_attention_heads", m.n_head},
            {"hidden_size", m.n_embd},
            {"vocab_size", m.vocab_size},
            {"max_position_embeddings", m.n_positions}};
  j.update(llama_fields_json(m));
  if (m.moe.enabled()) j["moe"] = moe_config_json(m.moe);
  return j;
}

}  // namespace zt
