// Loading a checkpoint into any layout.
//
// open_checkpoint() resolves a path (a save directory with `latest`, or a tag directory)
// and verifies `latest` and the manifest (checksums, structure). load_state() then reads
// only the shard files holding pieces this rank needs, verifies each file's size and
// checksum and every piece's checksum before touching the rank's state, and fills every
// held element of the requested kinds by resharding on global offsets
// (checkpoint/reshard.h). Files not named by the manifest (such as the temporary files
// of a torn save) are never opened.
// Errors: Corruption naming the file, the tensor and expected/actual checksums for
// damaged bytes; InvalidArgument for a checkpoint that does not fit the model.
#pragma once

#include <string>
#include <vector>

#include "checkpoint/manifest.h"
#include "checkpoint/safetensors.h"
#include "checkpoint/state_view.h"
#include "core/progress_fn.h"
#include "core/status.h"

namespace zt {

struct CheckpointRef {
  std::string dir;  // the tag directory
  Manifest manifest;
};

StatusOr<CheckpointRef> open_checkpoint(const std::string& path);

// Not collective: each rank loads what it holds. `kinds` must be present in the
// checkpoint ("param" alone loads weights only).
// progress (optional) hears the bytes of the shard files read and verified so far.
Status load_state(const CheckpointRef& ckpt, const RankStateView& view, const std::vector<std::string>& kinds,
                  const ProgressFn& progress = {});

// Reads one shard file of the manifest, verifying its size and checksum and every
// piece's; errors name the file and what is damaged.
StatusOr<SafetensorsFile> read_verified_shard(const CheckpointRef& ckpt, const ManifestFile& file);

// Weights only, into the table of a whole model on one process (sample, eval, export).
Status load_whole_params(const CheckpointRef& ckpt, const ParamTable& table, float* params);

// OK if the checkpoint's model has the shape of `model` (padding aside); otherwise an
// InvalidArgument naming both.
Status check_same_model(const CheckpointRef& ckpt, const GptConfig& model);

}  // namespace zt
