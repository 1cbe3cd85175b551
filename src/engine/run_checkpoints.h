// The checkpoint side of `zerotrain train`: restoring a run (--resume: everything, to
// continue bit for bit; --init: weights only, a fresh optimizer at step 0, from a
// zerotrain checkpoint or a HuggingFace GPT-2 safetensors file) with the checks that keep
// a resume exact, and saving (collective) with a line on rank 0.
#pragma once

#include <string>
#include <vector>

#include "config/config.h"
#include "core/progress_fn.h"
#include "core/status.h"
#include "engine/trainer.h"

namespace zt {

// Where a run starts from: at most one of the two paths is set.
struct RestoreRequest {
  std::string resume;  // a checkpoint to continue bit for bit (--resume)
  std::string init;    // weights only: a checkpoint or a HuggingFace model (--init)
};

// Collective; does nothing when neither path is set. Errors are the user's input.
// `progress` (rank 0's, may be empty) sees the checkpoint's bytes as they load.
Status restore_run(Trainer& trainer, const ZtConfig& cfg, const RestoreRequest& from, bool lead,
                   const ProgressFn& progress = {});

// Collective: a checkpoint of the current step in cfg's save directory; `progress`
// (rank 0's, may be empty) sees rank 0's shard as it is written.
Status save_run(Trainer& trainer, const ZtConfig& cfg, bool lead, const ProgressFn& progress = {});

// Rank 0 after save_run: the whole model's weights read back from the checkpoint just
// saved (how a pipeline or tensor-parallel run gets the weights its sample needs).
Status read_back_weights(const ZtConfig& cfg, std::vector<float>* full);

}  // namespace zt
