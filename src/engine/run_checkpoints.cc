// --resume / --init and checkpoint saves for `zerotrain train`.
#include "engine/run_checkpoints.h"

#include <cstdio>

#include "checkpoint/hf_model.h"
#include "checkpoint/rank_state.h"
#include "checkpoint/sharded_load.h"
#include "core/cpu_features.h"
#include "engine/trainer_checkpoint.h"
#include "core/threads.h"
#include "nn/gpt_params.h"

namespace zt {

namespace {

// A resume continues the same data stream: the global batch and the seed must match.
Status check_resumable(const EngineState& e, const ZtConfig& cfg, const std::string& dir) {
  if (e.train_batch_size != cfg.batch.train_batch_size) {
    return Status::InvalidArgument("/train_batch_size: " + std::to_string(cfg.batch.train_batch_size) +
                                   " sequences per step, but checkpoint " + dir + " was trained with " +
                                   std::to_string(e.train_batch_size) +
                                   "; a resume keeps the global batch (the data position is counted in batches)");
  }
  if (e.seed != cfg.training.seed) {
    return Status::InvalidArgument("/training/seed: " + std::to_string(cfg.training.seed) + ", but checkpoint " + dir +
                                   " was trained with seed " + std::to_string(e.seed) +
                                   "; a resume keeps the seed (it orders the data)");
  }
  return Status::OK();
}

std::string layout_text(const CheckpointLayout& l) {
  return "dp " + std::to_string(l.dp) + " x pp " + std::to_string(l.pp) + " x tp " + std::to_string(l.tp) +
         (l.ep > 1 ? " (ep " + std::to_string(l.ep) + ")" : "") + ", ZeRO-" + std::to_string(l.zero_stage);
}

}  // namespace

Status restore_run(Trainer& t, const ZtConfig& cfg, const RestoreRequest& args, bool lead, const ProgressFn& progress) {
  if (!args.resume.empty() && !args.init.empty()) {
    return Status::InvalidArgument("--resume and --init exclude each other: --resume continues a run, --init starts one from weights");
  }
  if (args.resume.empty() && args.init.empty()) return Status::OK();
  const std::string& path = args.resume.empty() ? args.init : args.resume;
  if (!args.init.empty() && is_hf_model_path(path)) {
    auto hf = read_hf_model(path);
    Status local = hf.status();
    if (local.ok() && !hf->config.same_model(cfg.model)) {
      local = Status::InvalidArgument("--init " + path + " holds a different model (" + hf->config.to_string() +
                                      ") than the configuration (" + cfg.model.to_string() + ")");
    }
    const HfModel empty;
    const HfModel& w = hf.ok() ? hf.value() : empty;
    ZT_RETURN_IF_ERROR(load_trainer_weights(t, local, w.table, w.params.data()));
    if (lead) std::printf("initialised from HuggingFace weights %s\n", path.c_str());
    return Status::OK();
  }
  ZT_ASSIGN_OR_RETURN(const CheckpointRef ckpt, open_checkpoint(path));
  const EngineState& e = ckpt.manifest.engine;
  if (!args.resume.empty()) ZT_RETURN_IF_ERROR(check_resumable(e, cfg, ckpt.dir));
  ZT_RETURN_IF_ERROR(load_trainer(t, ckpt, /*weights_only=*/args.resume.empty(), lead ? progress : ProgressFn{}).status());
  if (!lead) return Status::OK();
  if (!args.init.empty()) {
    std::printf("initialised from the weights of %s (step %lld); optimizer and step start fresh\n", ckpt.dir.c_str(),
                static_cast<long long>(e.global_step));
    return Status::OK();
  }
  std::printf("resumed from %s at step %lld\n", ckpt.dir.c_str(), static_cast<long long>(e.global_step));
  const CheckpointLayout& saved = ckpt.manifest.layout;
  const CheckpointLayout now = current_layout(t);
  if (!t.optimizer().rank_state().empty() && !rank_state_fits(ckpt.manifest, now)) {
    std::printf("note: %s's error feedback and schedule restart (the checkpoint %s), as DeepSpeed's do on every load\n",
                t.optimizer().name(),
                ckpt.manifest.rank_states.empty() ? "has none" : "was saved by another layout");
  }
  const std::string isa = isa_name(active_isa());
  if (saved.dp != now.dp || saved.pp != now.pp || saved.tp != now.tp || saved.zero_stage != now.zero_stage ||
      saved.ep != now.ep) {
    std::printf("note: resharded from %s to %s; losses continue within float reduction order, not bit for bit\n",
                layout_text(saved).c_str(), layout_text(now).c_str());
  } else if (e.isa != isa || e.threads_per_rank != num_threads()) {
    std::printf("note: saved with %s kernels and %d threads per rank, resumed with %s and %d: not bit for bit\n",
                e.isa.c_str(), e.threads_per_rank, isa.c_str(), num_threads());
  }
  return Status::OK();
}

Status save_run(Trainer& t, const ZtConfig& cfg, bool lead, const ProgressFn& progress) {
  TrainerSave save;
  save.save_dir = cfg.training.checkpoint_dir();
  save.keep_last = static_cast<int>(cfg.training.keep_last);
  save.config = cfg.source;
  if (lead) save.progress = progress;
  ZT_RETURN_IF_ERROR(save_trainer(t, save));
  if (lead) {
    std::printf("saved checkpoint %s/global_step%lld\n", save.save_dir.c_str(), static_cast<long long>(t.global_step()));
    std::fflush(stdout);
  }
  return Status::OK();
}

Status read_back_weights(const ZtConfig& cfg, std::vector<float>* full) {
  ZT_ASSIGN_OR_RETURN(const CheckpointRef ckpt, open_checkpoint(cfg.training.checkpoint_dir()));
  const ParamTable table = build_gpt_param_table(cfg.model, GptLayout{});
  full->assign(table.numel(), 0.0f);
  return load_whole_params(ckpt, table, full->data());
}

}  // namespace zt
