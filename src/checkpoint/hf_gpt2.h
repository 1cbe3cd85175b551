// HuggingFace GPT-2 interop: the consolidated model as `model.safetensors` (or shards
// with an index above the shard size: checkpoint/hf_common.h) with HuggingFace's names
// and layout, plus its `config.json`.
//
// zerotrain's tensor names are HuggingFace's without the "transformer." prefix. Layout
// differences: HuggingFace's Conv1D stores attn.c_attn, attn.c_proj, mlp.c_fc and
// mlp.c_proj weights as [in, out], the transpose of zerotrain's [out, in]; wte is
// written without vocabulary padding; the LM head is tied to wte and not written. The
// file carries {"format": "pt"} metadata, which transformers requires.
// Reading accepts names with or without "transformer.", ignores the causal-mask buffers
// (attn.bias, attn.masked_bias) some files carry, accepts lm_head.weight only when it
// equals wte (zerotrain ties them), and refuses anything else it does not know, naming
// it. Weights may be F32, BF16 or F16 (widened exactly).
#pragma once

#include <string>
#include <vector>

#include "checkpoint/hf_common.h"
#include "checkpoint/safetensors.h"
#include "core/status.h"
#include "io/json_strict.h"
#include "nn/gpt_config.h"
#include "tensor/tensor_spec.h"

namespace zt {

// Writes the weights (write_hf_weights) and <dir>/config.json (atomically; dir is
// created). `table` is a whole model (one process, no tp); `params` its arena.
Status export_hf_gpt2(const GptConfig& model, const ParamTable& table, const float* params, const std::string& dir,
                      const HfExportOptions& options = {});

// HuggingFace's config.json for `model`; torch_dtype names the stored dtype.
Json hf_config_json(const GptConfig& model, StDType dtype = StDType::kF32);

// path: a model directory, its model.safetensors or its model.safetensors.index.json
// (config.json beside them).
StatusOr<HfModel> read_hf_gpt2(const std::string& path);

}  // namespace zt
