// export / import between zerotrain checkpoints and HuggingFace GPT-2 files.
#include "cli/checkpoint_commands.h"

#include <cstdio>

#include "checkpoint/hf_gpt2.h"
#include "checkpoint/sharded_load.h"
#include "checkpoint/sharded_save.h"
#include "cli/exit_status.h"
#include "cli/progress.h"
#include "cli/task_progress.h"
#include "core/version.h"
#include "nn/gpt_params.h"

namespace zt {

int run_export(const ExportCommandArgs& a) {
  auto ckpt = open_checkpoint(a.checkpoint);
  if (!ckpt.ok()) return report_error(ckpt.status(), kExitBadInput);
  const GptConfig& model = ckpt->manifest.model;
  const ParamTable table = build_gpt_param_table(model, GptLayout{});
  std::vector<float> params(table.numel());
  Status s = load_whole_params(ckpt.value(), table, params.data());
  if (!s.ok()) return report_error(s, kExitBadInput);
  const StDType dtype = a.dtype == "bf16" ? StDType::kBF16 : a.dtype == "fp16" ? StDType::kF16 : StDType::kF32;
  TaskProgress progress("export", Progress::stdout_is_terminal());
  s = export_hf_gpt2(model, table, params.data(), a.output, dtype, progress.fn());
  progress.finish();
  if (!s.ok()) return report_error(s, kExitFailure);
  std::printf("exported %s (step %lld, %s) to %s/model.safetensors (%s) and config.json\n", ckpt->dir.c_str(),
              static_cast<long long>(ckpt->manifest.engine.global_step), model.to_string().c_str(), a.output.c_str(),
              st_dtype_name(dtype));
  return kExitOk;
}

int run_import(const ImportCommandArgs& a) {
  auto hf = read_hf_gpt2(a.model);
  if (!hf.ok()) return report_error(hf.status(), kExitBadInput);
  SaveRequest req;
  req.save_dir = a.output;
  req.tag = a.tag;
  req.meta.zerotrain_version = kZerotrainVersion;
  req.meta.model = hf->config;
  const GptConfig& c = hf->config;
  req.meta.config = {{"model", {{"n_layer", c.n_layer}, {"n_head", c.n_head}, {"n_embd", c.n_embd},
                                {"vocab_size", c.vocab_size}, {"n_positions", c.n_positions}}},
                     {"data", {{"tokenizer", a.tokenizer}, {"seq_len", c.n_positions}}}};
  TaskProgress progress("import", Progress::stdout_is_terminal());
  req.progress = progress.fn();
  Status s = save_whole_params(hf->table, hf->params.data(), req);
  progress.finish();
  if (!s.ok()) return report_error(s, s.code() == StatusCode::kInvalidArgument ? kExitBadInput : kExitFailure);
  std::printf("imported %s (%s) as checkpoint %s/%s (weights only)\n", a.model.c_str(), c.to_string().c_str(),
              a.output.c_str(), a.tag.c_str());
  return kExitOk;
}

}  // namespace zt
