// HuggingFace GPT-2 interop: the consolidated model as one `model.safetensors` with
// HuggingFace's names and layout, plus its `config.json`.
//
// zerotrain's tensor names are HuggingFace's without the "transformer." prefix. Layout
// differences: HuggingFace's Conv1D stores attn.c_attn, attn.c_proj, mlp.c_fc and
// mlp.c_proj weights as [in, out], the transpose of zerotrain's [out, in]; wte is
// written without vocabulary padding; the LM head is tied to wte and not written. The
// file carries {"format": "pt"} metadata, which transformers requires.
// Reading accepts names with or without "transformer.", ignores the causal-mask buffers
// (attn.bias, attn.masked_bias) some files carry, accepts lm_head.weight only when it
// equals wte (zerotrain ties them), and refuses anything else it does not know, naming
// it. Weights must be F32.
#pragma once

#include <string>
#include <vector>

#include "checkpoint/safetensors.h"
#include "core/status.h"
#include "io/json_strict.h"
#include "nn/gpt_config.h"
#include "tensor/tensor_spec.h"

namespace zt {

// Writes <dir>/model.safetensors and <dir>/config.json (atomically; dir is created).
// `table` is a whole model (one process, no tp); `params` its arena.
// dtype: kF32 (the default, exact), kBF16 or kF16 (each value rounded to nearest even).
Status export_hf_gpt2(const GptConfig& model, const ParamTable& table, const float* params, const std::string& dir,
                      StDType dtype = StDType::kF32, const ProgressFn& progress = {});

// HuggingFace's config.json for `model`; torch_dtype names the stored dtype.
Json hf_config_json(const GptConfig& model, StDType dtype = StDType::kF32);

struct HfModel {
  GptConfig config;          // from config.json (no padding)
  ParamTable table;          // whole model
  std::vector<float> params;
};

// path: a model.safetensors file (config.json beside it) or a directory holding both.
StatusOr<HfModel> read_hf_gpt2(const std::string& path);

// A path read_hf_gpt2 would take (a *.safetensors file, or a directory with
// model.safetensors) rather than a zerotrain checkpoint.
bool is_hf_model_path(const std::string& path);

}  // namespace zt
