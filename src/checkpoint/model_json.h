// A model's shape as JSON, in HuggingFace's names, for the places that record it: the
// checkpoint manifest's "model" object (checkpoint/manifest.h), HuggingFace config.json
// (checkpoint/hf_llama.h) and the "model" section of the configuration an import records
// (which zerotrain's config parser, config/model_section.cc, reads back).
//
// Invariants: a value written and read back is identical. A float is written as the
// shortest decimal that reads back as the same float (1e-5f as 1e-05), a double exactly.
// GPT-2's manifest object has no "family" and is what it was before Llama; an absent
// family reads as GPT-2. A Llama manifest object must hold every Llama key.
#pragma once

#include "io/json_reader.h"
#include "io/json_strict.h"
#include "nn/gpt_config.h"

namespace zt {

// v as a JSON number whose dump() is v's shortest decimal and whose value, narrowed to
// float, is v again.
Json float_json(float v);

// {"intermediate_size", "num_key_value_heads" (resolved: never 0), "rms_norm_eps",
// "rope_theta", "tie_word_embeddings"}, plus "rope_scaling" when the model has one and
// HF LlamaConfig's "attention_bias" (q, k, v and o biases) and "mlp_bias" when true.
Json llama_fields_json(const GptConfig& m);

// attention_bias (qkv_bias and out_bias) and mlp_bias, false when absent.
void read_llama_biases(JsonReader& r, GptConfig* g);

// HuggingFace's rope_scaling object: {"rope_type": "linear", "factor"}, or llama3's
// rope_type, factor, low_freq_factor, high_freq_factor, original_max_position_embeddings;
// null for none.
Json rope_scaling_json(const RopeScaling& s);

// Reads a rope_scaling object through `r` (its own reader; the caller calls done() or
// finish()). "type" is accepted for "rope_type" (older files); "default" means none;
// types other than linear and llama3 fail naming the key.
void read_rope_scaling(JsonReader& r, RopeScaling* s);

// The manifest's "model" object, and its strict reader (every key of the family named,
// unknown family values and unknown keys refused with the key's JSON path).
Json manifest_model_json(const GptConfig& m);
void read_manifest_model(JsonReader& r, GptConfig* m);

// The "model" section of a zerotrain configuration describing `m`: GPT-2's names for
// GPT-2, {"family": "llama", num_hidden_layers, num_attention_heads, hidden_size,
// vocab_size, max_position_embeddings, and llama_fields_json's keys} for Llama.
Json config_model_json(const GptConfig& m);

}  // namespace zt
