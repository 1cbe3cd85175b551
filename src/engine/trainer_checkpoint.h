// A Trainer's checkpoints: save_trainer() writes its state as one collective sharded
// checkpoint (checkpoint/sharded_save.h) with the engine state that makes a resume
// bitwise (step, optimizer step count, LR schedule position, data position, seed);
// load_trainer() restores it into any layout (checkpoint/sharded_load.h), every rank
// agreeing on the outcome, so that no rank trains on a partial load.
#pragma once

#include <string>

#include "checkpoint/manifest.h"
#include "checkpoint/sharded_load.h"
#include "core/status.h"
#include "engine/trainer.h"

namespace zt {

struct TrainerSave {
  std::string save_dir;
  std::string tag;   // "" = global_step<N>
  int keep_last = 0;
  Json config;       // the run's configuration, stored in the manifest
  ProgressFn progress;  // optional: this rank's shard being written
};

// Collective over the trainer's world.
Status save_trainer(Trainer& trainer, const TrainerSave& save);

// Collective. weights_only: parameters only, the optimizer and step start fresh (for
// --init); otherwise everything, and the checkpoint must hold this optimizer's state.
// Returns the checkpoint's engine state.
// progress (optional) hears the bytes of this rank's shard files verified so far.
StatusOr<EngineState> load_trainer(Trainer& trainer, const CheckpointRef& ckpt, bool weights_only,
                                   const ProgressFn& progress = {});

// Collective. Sets every parameter this rank holds from a whole model's weights (a
// HuggingFace import: `whole` has no tp slicing), optimizer and step fresh. `local` is
// this rank's outcome of reading them; every rank returns an error if any rank failed.
Status load_trainer_weights(Trainer& trainer, Status local, const ParamTable& whole, const float* whole_params);

// The layout of this trainer's job, as a manifest records it.
CheckpointLayout current_layout(Trainer& trainer);

// The sequences per optimizer step of this trainer's job.
int64_t train_batch_size(Trainer& trainer);

}  // namespace zt
