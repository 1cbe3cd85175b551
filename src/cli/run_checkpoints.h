// The checkpoint side of `zerotrain train`: restoring a run (--resume: everything, to
// continue bit for bit; --init: weights only, a fresh optimizer at step 0, from a
// zerotrain checkpoint or a HuggingFace GPT-2 safetensors file) with the checks that keep
// a resume exact, and saving (collective) with a line on rank 0.
#pragma once

#include <string>
#include <vector>

#include "cli/train_command.h"
#include "config/config.h"
#include "core/status.h"
#include "engine/trainer.h"

namespace zt {

// Collective; does nothing without --resume / --init. Errors are the user's input.
Status restore_run(Trainer& trainer, const ZtConfig& cfg, const TrainCommandArgs& args, bool lead);

// Collective: a checkpoint of the current step in cfg's save directory.
Status save_run(Trainer& trainer, const ZtConfig& cfg, bool lead);

// Rank 0 after save_run: the whole model's weights read back from the checkpoint just
// saved (how a pipeline or tensor-parallel run gets the weights its sample needs).
Status read_back_weights(const ZtConfig& cfg, std::vector<float>* full);

}  // namespace zt
