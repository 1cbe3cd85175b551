// `zerotrain export` (a checkpoint -> HuggingFace model.safetensors + config.json) and
// `zerotrain import` (a HuggingFace GPT-2 model -> a weights-only zerotrain checkpoint,
// which `train --init` or `sample` take). Exit status 0, or 2 for bad input.
#pragma once

#include <string>

namespace zt {

struct ExportCommandArgs {
  std::string checkpoint;  // a save directory with `latest`, or a tag directory
  std::string output;      // directory for model.safetensors and config.json
  std::string dtype = "fp32";  // fp32 | bf16 | fp16: the stored dtype (the checkpoint's fp32 master, rounded)
};
int run_export(const ExportCommandArgs& args);

struct ImportCommandArgs {
  std::string model;   // model.safetensors (config.json beside it) or their directory
  std::string output;  // save directory of the new checkpoint
  std::string tag = "imported";
  std::string tokenizer = "gpt2";  // recorded for `sample`: gpt2 or byte
};
int run_import(const ImportCommandArgs& args);

}  // namespace zt
