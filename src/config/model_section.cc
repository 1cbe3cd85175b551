// The "model" section: a family ("gpt2" or "llama"), a preset, and shape keys in
// HuggingFace's names. GPT-2's names (n_layer, n_head, n_embd, n_positions) and Llama's
// (num_hidden_layers, num_attention_heads, hidden_size, max_position_embeddings) are
// synonyms for either family; giving both spellings of one field is an error naming both.
// The Llama-only keys (intermediate_size, num_key_value_heads, rms_norm_eps, rope_theta,
// rope_scaling, tie_word_embeddings) are refused for GPT-2. Defaults are the demo's small
// model; its vocabulary comes from the tokenizer (a SentencePiece or tokenizer.json path
// leaves vocab_size to the preset or the key: the run checks it against the tokenizer).
// Preset shapes and where they come from: README "Model presets".
#include <optional>
#include <string>

#include "config/sections.h"

namespace zt::config_sections {

namespace {

struct Preset {
  const char* name;
  ModelFamily family;
  int n_layer, n_head, n_embd;
  // Llama and Qwen2 only.
  int n_kv_head, intermediate, vocab, positions;
  double theta;
  bool tied;
};

constexpr ModelFamily kG = ModelFamily::kGpt2, kL = ModelFamily::kLlama;

// GPT-2: HF gpt2* config.json. Llama: llama2.c's README (stories*; 42M's hidden size from
// train.py's multiple_of=32), HuggingFaceTB/SmolLM-*, TinyLlama-1.1B, meta-llama/Llama-3.2-1B and Llama-2-7b-hf
// config.json (shapes in /work/shared/llama-notes.md section 3). Qwen2: Qwen/Qwen2.5-0.5B's
// config.json (rms_norm_eps 1e-6).
constexpr Preset kPresets[] = {
    {"gpt2", kG, 12, 12, 768, 0, 0, 0, 0, 0, false},
    {"gpt2-medium", kG, 24, 16, 1024, 0, 0, 0, 0, 0, false},
    {"gpt2-large", kG, 36, 20, 1280, 0, 0, 0, 0, 0, false},
    {"gpt2-xl", kG, 48, 25, 1600, 0, 0, 0, 0, 0, false},
    {"tiny", kG, 2, 2, 64, 0, 0, 0, 0, 0, false},
    {"small", kG, 4, 4, 256, 0, 0, 0, 0, 0, false},
    {"stories15M", kL, 6, 6, 288, 6, 768, 32000, 256, 1e4, true},
    {"stories42M", kL, 8, 8, 512, 8, 1376, 32000, 1024, 1e4, true},
    {"stories110M", kL, 12, 12, 768, 12, 2048, 32000, 1024, 1e4, true},
    {"SmolLM-135M", kL, 30, 9, 576, 3, 1536, 49152, 2048, 1e4, true},
    {"SmolLM-360M", kL, 32, 15, 960, 5, 2560, 49152, 2048, 1e4, true},
    {"TinyLlama-1.1B", kL, 22, 32, 2048, 4, 5632, 32000, 2048, 1e4, false},
    {"Llama-3.2-1B", kL, 16, 32, 2048, 8, 8192, 128256, 131072, 5e5, true},
    {"Llama-2-7B", kL, 32, 32, 4096, 32, 11008, 32000, 4096, 1e4, false},
    {"Qwen2.5-0.5B", ModelFamily::kQwen2, 24, 14, 896, 2, 4864, 151936, 32768, 1e6, true},
    // Mixture of experts (apply_moe_preset): mistralai/Mixtral-8x7B-v0.1's config.json, and a
    // tiny Mixtral (8 experts, top-2) whose vocabulary comes from the tokenizer.
    {"tiny-mixtral", kL, 2, 4, 128, 2, 256, 0, 1024, 1e6, false},
    {"Mixtral-8x7B", kL, 32, 32, 4096, 8, 14336, 32000, 32768, 1e6, false},
    // Qwen/Qwen1.5-MoE-A2.7B's config.json: 60 experts 1408 wide, top-4 not renormalised,
    // a sigmoid-gated shared expert 5632 wide.
    {"Qwen1.5-MoE-A2.7B", ModelFamily::kQwen2, 24, 16, 2048, 16, 5632, 151936, 8192, 1e6, false},
};

// The experts of the MoE presets, with HF's routing (their router_aux_loss_coef with
// output_router_logits off, as HF's configs: reported, not in the objective).
void apply_moe_preset(const Preset& p, GptConfig* m) {
  const std::string name = p.name;
  const bool qwen = name == "Qwen1.5-MoE-A2.7B";
  if (name != "tiny-mixtral" && name != "Mixtral-8x7B" && !qwen) return;
  MoeConfig& moe = m->moe;
  moe.num_experts = qwen ? 60 : 8;
  moe.gate.k = qwen ? 4 : 2;
  moe.gate.routing = MoeRouting::kMixtral;
  moe.gate.drop_tokens = moe.gate.use_rts = moe.gate.second_sampling = false;
  moe.gate.renormalize = !qwen;
  if (qwen) {
    moe.intermediate_size = 1408;
    moe.shared_intermediate_size = 5632;
  }
}

// One field under two names: the value of whichever is given (dflt when neither).
int64_t synonym(JsonReader& r, const char* gpt_name, const char* hf_name, int64_t dflt, int64_t lo, int64_t hi) {
  const bool gpt = r.has(gpt_name), hf = r.has(hf_name);
  if (gpt && hf) {
    r.fail(hf_name, std::string("given together with its synonym \"") + gpt_name + "\"; keep one");
    return dflt;
  }
  return r.integer(hf ? hf_name : gpt_name, dflt, lo, hi);
}

const Preset* find_preset(const std::string& name) {
  for (const Preset& p : kPresets) {
    if (name == p.name) return &p;
  }
  return nullptr;
}

void apply_preset(const Preset& p, GptConfig* m) {
  m->n_layer = p.n_layer;
  m->n_head = p.n_head;
  m->n_embd = p.n_embd;
  if (p.family == ModelFamily::kGpt2) return;
  m->set_family(p.family);
  if (p.family == ModelFamily::kQwen2) m->rms_norm_eps = 1e-6f;
  m->n_kv_head = p.n_kv_head;
  m->intermediate_size = p.intermediate;
  if (p.vocab > 0) m->vocab_size = p.vocab;
  m->n_positions = p.positions;
  m->rope_theta = p.theta;
  m->tie_word_embeddings = p.tied;
  if (std::string(p.name) == "Llama-3.2-1B") m->rope_scaling = RopeScaling{"llama3", 32.0, 1.0, 4.0, 8192};
  apply_moe_preset(p, m);
}

// Meta's FeedForward sizing with llama2.c's multiple_of = 32: int(8C/3) rounded up.
int default_intermediate(int C) { return (8 * C / 3 + 31) / 32 * 32; }

void parse_rope_scaling(JsonReader& r, RopeScaling* s) {
  const Json* raw = r.raw("rope_scaling");
  if (raw == nullptr || raw->is_null()) return;
  std::optional<JsonReader> o = r.object("rope_scaling");
  if (!o) return;
  // HF's key is rope_type; older files say type.
  const char* key = o->has("type") && !o->has("rope_type") ? "type" : "rope_type";
  s->type = o->choice(key, "", {"linear", "llama3"});
  if (s->type.empty()) o->fail("rope_type", "required: \"linear\" or \"llama3\"");
  s->factor = o->number("factor", 1.0, 1.0, 1e6);
  s->low_freq_factor = o->number("low_freq_factor", 1.0, 1e-6, 1e6);
  s->high_freq_factor = o->number("high_freq_factor", 4.0, 1e-6, 1e6);
  s->original_max_position_embeddings =
      static_cast<int>(o->integer("original_max_position_embeddings", 8192, 1, 1 << 24));
  o->done();
}

void parse_llama_fields(JsonReader& r, GptConfig* m) {
  m->n_kv_head = static_cast<int>(r.integer("num_key_value_heads", m->n_kv_head, 0, 1024));
  const int I = m->intermediate_size > 0 ? m->intermediate_size : default_intermediate(m->n_embd);
  m->intermediate_size = static_cast<int>(r.integer("intermediate_size", I, 1, 1 << 20));
  m->rms_norm_eps = static_cast<float>(r.number("rms_norm_eps", m->rms_norm_eps, 1e-12, 1.0));
  m->rope_theta = r.number("rope_theta", m->rope_theta, 1e-6, 1e12);
  m->tie_word_embeddings = r.boolean("tie_word_embeddings", m->tie_word_embeddings);
  // HF LlamaConfig: attention_bias on q, k, v and o; mlp_bias on gate, up and down. Qwen2's
  // biases are its architecture (q, k, v): Qwen2Config has neither key.
  for (const char* k : {"attention_bias", "mlp_bias"}) {
    if (m->family() == ModelFamily::kQwen2 && r.has(k)) r.fail(k, "is a Llama key; Qwen2 has q/k/v biases and no others");
  }
  if (m->family() == ModelFamily::kLlama) {
    m->qkv_bias = m->out_bias = r.boolean("attention_bias", m->qkv_bias);
    m->mlp_bias = r.boolean("mlp_bias", m->mlp_bias);
  }
  parse_rope_scaling(r, &m->rope_scaling);
}

void refuse_llama_keys(JsonReader& r) {
  for (const char* k : {"intermediate_size", "num_key_value_heads", "rms_norm_eps", "rope_theta", "rope_scaling",
                        "tie_word_embeddings", "attention_bias", "mlp_bias"}) {
    if (r.has(k)) r.fail(k, "is a Llama key; set \"family\": \"llama\" or \"qwen2\" (or such a preset) to use it");
  }
}

}  // namespace

void parse_model(JsonReader& root, const std::string& tokenizer, GptConfig* m, int* ep_size) {
  m->n_layer = 4;
  m->n_head = 4;
  m->n_embd = 256;
  m->n_positions = 1024;
  m->vocab_size = tokenizer == "byte" ? 257 : tokenizer == "gpt2" ? 50257 : 32000;
  JsonReader r = root.object_or_empty("model");
  const std::string preset = r.choice("preset", "", {"gpt2", "gpt2-medium", "gpt2-large", "gpt2-xl", "tiny", "small",
                                                     "stories15M", "stories42M", "stories110M", "SmolLM-135M",
                                                     "SmolLM-360M", "TinyLlama-1.1B", "Llama-3.2-1B", "Llama-2-7B", "Qwen2.5-0.5B",
                                                     "tiny-mixtral", "Mixtral-8x7B", "Qwen1.5-MoE-A2.7B"});
  const Preset* p = find_preset(preset);
  if (p != nullptr) apply_preset(*p, m);
  const std::string family = r.choice("family", family_name(m->family()), {"gpt2", "llama", "qwen2"});
  const ModelFamily f = family_of_name(family);
  if (p != nullptr && p->family != f) r.fail("family", "\"" + family + "\" contradicts the preset \"" + preset + "\"");
  if (f != m->family()) m->set_family(f);  // a preset has set its family's knobs already
  m->n_layer = static_cast<int>(synonym(r, "n_layer", "num_hidden_layers", m->n_layer, 1, 1024));
  m->n_head = static_cast<int>(synonym(r, "n_head", "num_attention_heads", m->n_head, 1, 1024));
  m->n_embd = static_cast<int>(synonym(r, "n_embd", "hidden_size", m->n_embd, 1, 65536));
  m->vocab_size = static_cast<int>(r.integer("vocab_size", m->vocab_size, 1, 1 << 24));
  m->n_positions = static_cast<int>(synonym(r, "n_positions", "max_position_embeddings", m->n_positions, 1, 1 << 24));
  m->padded_vocab_size = static_cast<int>(r.integer("padded_vocab_size", 0, 0, 1 << 24));
  if (m->family() != ModelFamily::kGpt2) {
    parse_llama_fields(r, m);
  } else {
    refuse_llama_keys(r);
  }
  parse_moe_keys(r, m, ep_size);
  if (r.status().ok()) {
    if (Status s = m->validate(); !s.ok()) {
      const std::string msg = s.message();
      const size_t colon = msg.find(':');
      const std::string key = msg.starts_with("model.") && colon != std::string::npos ? msg.substr(6, colon - 6) : "";
      const size_t dot = key.find('.');  // model.moe.<field>: the moe object, naming the field
      const std::string sub = dot == std::string::npos ? "" : key.substr(dot + 1) + ": ";
      r.fail(key.empty() ? "n_embd" : key.substr(0, dot), sub + (colon == std::string::npos ? msg : msg.substr(colon + 2)));
    }
  }
  r.done();
}

}  // namespace zt::config_sections
