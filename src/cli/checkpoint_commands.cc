// export / import between zerotrain checkpoints and HuggingFace model files.
#include "cli/checkpoint_commands.h"

#include <CLI/CLI.hpp>

#include <memory>

#include <cstdio>
#include <filesystem>

#include "checkpoint/hf_model.h"
#include "checkpoint/model_json.h"
#include "checkpoint/sharded_load.h"
#include "checkpoint/sharded_save.h"
#include "cli/exit_status.h"
#include "cli/progress.h"
#include "cli/task_progress.h"
#include "core/version.h"
#include "io/filesystem.h"
#include "nn/gpt_params.h"

namespace zt {

int run_export(const ExportCommandArgs& a) {
  auto shard_bytes = parse_shard_size(a.max_shard_size);
  if (!shard_bytes.ok()) return report_error(shard_bytes.status(), kExitBadInput);
  auto ckpt = open_checkpoint(a.checkpoint);
  if (!ckpt.ok()) return report_error(ckpt.status(), kExitBadInput);
  const GptConfig& model = ckpt->manifest.model;
  const ParamTable table = build_gpt_param_table(model, GptLayout{});
  std::vector<float> params(table.numel());
  Status s = load_whole_params(ckpt.value(), table, params.data());
  if (!s.ok()) return report_error(s, kExitBadInput);
  HfExportOptions options;
  options.dtype = a.dtype == "bf16" ? StDType::kBF16 : a.dtype == "fp16" ? StDType::kF16 : StDType::kF32;
  options.max_shard_bytes = shard_bytes.value();
  TaskProgress progress("export", Progress::stdout_is_terminal());
  options.progress = progress.fn();
  s = export_hf_model(model, table, params.data(), a.output, options);
  progress.finish();
  if (!s.ok()) return report_error(s, kExitFailure);
  const bool sharded = file_exists(a.output + "/model.safetensors.index.json");
  std::printf("exported %s (step %lld, %s) to %s/%s (%s) and config.json\n", ckpt->dir.c_str(),
              static_cast<long long>(ckpt->manifest.engine.global_step), model.to_string().c_str(), a.output.c_str(),
              sharded ? "model.safetensors.index.json with its shards" : "model.safetensors",
              st_dtype_name(options.dtype));
  return kExitOk;
}

namespace {

// --tokenizer, or HF's tokenizer.model / tokenizer.json in the model's directory, or gpt2.
std::string import_tokenizer(const ImportCommandArgs& a, const GptConfig& c) {
  if (!a.tokenizer.empty()) return a.tokenizer;
  std::error_code ec;
  std::filesystem::path dir(a.model);
  if (!std::filesystem::is_directory(dir, ec)) dir = dir.parent_path();
  for (const char* name : {"tokenizer.model", "tokenizer.json"}) {
    const std::filesystem::path p = std::filesystem::absolute(dir / name, ec);
    if (!ec && std::filesystem::is_regular_file(p, ec)) return p.string();
  }
  if (c.vocab_size != 50257) {  // not GPT-2's vocabulary: sampling needs the model's own tokenizer
    std::printf("note: no tokenizer.model or tokenizer.json beside %s: recorded gpt2; pass --tokenizer for sample\n",
                a.model.c_str());
  }
  return "gpt2";
}

}  // namespace

int run_import(const ImportCommandArgs& a) {
  auto hf = read_hf_model(a.model);
  if (!hf.ok()) return report_error(hf.status(), kExitBadInput);
  SaveRequest req;
  req.save_dir = a.output;
  req.tag = a.tag;
  req.meta.zerotrain_version = kZerotrainVersion;
  req.meta.model = hf->config;
  const GptConfig& c = hf->config;
  const std::string tokenizer = import_tokenizer(a, c);
  req.meta.config = {{"model", config_model_json(c)}, {"data", {{"tokenizer", tokenizer}, {"seq_len", c.n_positions}}}};
  TaskProgress progress("import", Progress::stdout_is_terminal());
  req.progress = progress.fn();
  Status s = save_whole_params(hf->table, hf->params.data(), req);
  progress.finish();
  if (!s.ok()) return report_error(s, s.code() == StatusCode::kInvalidArgument ? kExitBadInput : kExitFailure);
  std::printf("imported %s (%s) as checkpoint %s/%s (weights only; tokenizer %s)\n", a.model.c_str(),
              c.to_string().c_str(), a.output.c_str(), a.tag.c_str(), tokenizer.c_str());
  return kExitOk;
}

Command add_export_command(CLI::App& app) {
  auto exp = std::make_shared<ExportCommandArgs>();
  CLI::App* x = app.add_subcommand("export", "Write a checkpoint's model as HuggingFace files (GPT2LMHeadModel or "
                                             "LlamaForCausalLM): config.json + model.safetensors, or shards + index");
  x->add_option("checkpoint", exp->checkpoint, "Checkpoint (save directory with 'latest', or a tag directory)")->required();
  x->add_option("-o,--output", exp->output, "Output directory")->required();
  x->add_option("--dtype", exp->dtype, "Stored dtype: fp32 (default, exact), bf16 or fp16 (rounded to nearest even)")
      ->check(CLI::IsMember({"fp32", "bf16", "fp16"}));
  x->add_option("--max-shard-size", exp->max_shard_size,
                "Largest weights file before sharding with model.safetensors.index.json: bytes, or e.g. 100MB, 5GB "
                "(default 5GB, as HuggingFace)");
  return {x, [exp] { return run_export(*exp); }, true};
}

Command add_import_command(CLI::App& app) {
  auto imp = std::make_shared<ImportCommandArgs>();
  CLI::App* i = app.add_subcommand("import", "Turn a HuggingFace GPT-2 or Llama model into a zerotrain checkpoint");
  i->add_option("model", imp->model, "Model directory (config.json + model.safetensors or model.safetensors.index.json "
                                    "and shards), or one of those weight files")->required();
  i->add_option("-o,--output", imp->output, "Save directory of the new checkpoint")->required();
  i->add_option("--tag", imp->tag, "Tag of the new checkpoint");
  i->add_option("--tokenizer", imp->tokenizer, "Tokenizer recorded for sample: gpt2, byte, or a path/to/tokenizer.model "
                                              "or path/to/tokenizer.json (default: the one beside the model, else gpt2)")
      ->check(tokenizer_validator());
  return {i, [imp] { return run_import(*imp); }, true};
}

}  // namespace zt
