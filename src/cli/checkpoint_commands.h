// `zerotrain export` (a checkpoint -> HuggingFace GPT2LMHeadModel or LlamaForCausalLM
// files: config.json plus model.safetensors, or shards with an index) and `zerotrain
// import` (such files -> a weights-only zerotrain checkpoint, which `train --init` or
// `sample` take). The family comes from the checkpoint's manifest on export and from
// config.json on import (checkpoint/hf_model.h). Exit status 0, or 2 for bad input.
#pragma once

#include "cli/command.h"

#include <string>

namespace zt {

struct ExportCommandArgs {
  std::string checkpoint;  // a save directory with `latest`, or a tag directory
  std::string output;      // directory for model.safetensors and config.json
  std::string dtype = "fp32";  // fp32 | bf16 | fp16: the stored dtype (the checkpoint's fp32 master, rounded)
  std::string max_shard_size = "5GB";  // bytes, or with a unit (checkpoint/hf_common.h parse_shard_size)
};
int run_export(const ExportCommandArgs& args);

struct ImportCommandArgs {
  std::string model;   // a model directory, its model.safetensors or model.safetensors.index.json
  std::string output;  // save directory of the new checkpoint
  std::string tag = "imported";
  // Recorded for `sample`: gpt2, byte, or a tokenizer.model / tokenizer.json path; empty:
  // the tokenizer.model or tokenizer.json beside the model, else gpt2.
  std::string tokenizer;
};
int run_import(const ImportCommandArgs& args);

// Registers `zerotrain export` and its flags.
Command add_export_command(CLI::App& app);
// Registers `zerotrain import` and its flags.
Command add_import_command(CLI::App& app);

}  // namespace zt
