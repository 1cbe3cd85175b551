// The HuggingFace files of any family zerotrain trains: read_hf_model picks the reader
// from config.json (model_type "gpt2" or "llama"; without model_type, LlamaForCausalLM
// in architectures means Llama and anything else is read as GPT-2, whose reader checks
// its own keys), export_hf_model the writer from the model's family. Other model types
// are refused, naming config.json and the value.
#pragma once

#include <string>

#include "checkpoint/hf_common.h"
#include "nn/gpt_config.h"
#include "tensor/tensor_spec.h"

namespace zt {

// path: a model directory, its model.safetensors or its model.safetensors.index.json.
StatusOr<HfModel> read_hf_model(const std::string& path);

// checkpoint/hf_gpt2.h's or checkpoint/hf_llama.h's export, by model.family().
Status export_hf_model(const GptConfig& model, const ParamTable& table, const float* params, const std::string& dir,
                       const HfExportOptions& options = {});

}  // namespace zt
