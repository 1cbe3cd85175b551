// HuggingFace Llama interop: a Llama model as LlamaForCausalLM's files (config.json plus
// model.safetensors, or shards with model.safetensors.index.json: checkpoint/hf_common.h)
// and back.
//
// Mapping: zerotrain's Llama table (nn/gpt_params.h, nn/param_names.cc) is HF's state dict without the
// "model." prefix, nn.Linear [out, in] on both sides, so no tensor is transposed. Export
// adds the prefix (lm_head.weight keeps its name and is absent when tied), writes the
// tensors in HF's state-dict order (per layer q, k, v, o, gate, up, down, then the two
// norms), drops the vocabulary padding rows of embed_tokens and lm_head, and writes
// config.json with sorted keys, so export -> import -> export is byte-identical.
// Import accepts F32, BF16 and F16 (widened exactly), ignores the
// model.layers.N.self_attn.rotary_emb.inv_freq buffers old conversions carry, accepts a
// lm_head.weight in a tied model only when it equals embed_tokens, and refuses unknown
// and missing tensors and wrong shapes, naming the file and the tensor. config.json is
// refused, naming the key, for: another model_type or architecture, head_dim other than
// hidden_size / num_attention_heads, hidden_act other than silu, attention_bias or
// mlp_bias true, rope_interleaved true, and rope_scaling other than none, linear or llama3.
#pragma once

#include <string>

#include "checkpoint/hf_common.h"
#include "io/json_strict.h"
#include "nn/gpt_config.h"
#include "tensor/tensor_spec.h"

namespace zt {

// Writes `dir` (created): the weights as write_hf_weights does, then config.json.
// `table` is a whole Llama model (one process, no tp); `params` its arena.
Status export_hf_llama(const GptConfig& model, const ParamTable& table, const float* params, const std::string& dir,
                       const HfExportOptions& options = {});

// LlamaForCausalLM's config.json for `model`; torch_dtype names the stored dtype.
Json hf_llama_config_json(const GptConfig& model, StDType dtype = StDType::kF32);

// A Llama GptConfig (no padding) from a parsed config.json; InvalidArgument naming
// `label` and the key's JSON path for a missing, mistyped or unsupported value.
// family: kLlama (LlamaForCausalLM) or kQwen2 (Qwen2ForCausalLM: Llama's names and keys,
// q/k/v biases, no attention_bias/mlp_bias keys, use_sliding_window refused when true).
StatusOr<GptConfig> parse_hf_llama_config(const Json& config, const std::string& label,
                                          ModelFamily family = ModelFamily::kLlama);

// path: a model directory, its model.safetensors or its model.safetensors.index.json.
StatusOr<HfModel> read_hf_llama(const std::string& path, ModelFamily family = ModelFamily::kLlama);

// HF's state-dict names of `model` in state-dict order, each with zerotrain's name.
struct HfName {
  std::string hf;
  std::string zt;
};
std::vector<HfName> hf_llama_names(const GptConfig& model);

}  // namespace zt
