// Saving a checkpoint: collective over every rank of the job.
//
// Layout (DeepSpeed's names, safetensors instead of pickle):
//   <save_dir>/<tag>/rank_00000.safetensors ...  one per world rank: its pieces, named
//                                                "<kind>/<tensor>" (1-D F32)
//   <save_dir>/<tag>/manifest.json               checkpoint/manifest.h
//   <save_dir>/latest                            checkpoint/latest_file.h
// Protocol: a barrier (phase "checkpoint save": a call from only some ranks fails with
// a timeout naming the phase instead of hanging forever); every rank writes its shard
// atomically and sends its piece list, or its error, to rank 0; rank 0 checks that the
// pieces tile every tensor, writes manifest.json, then moves `latest`; rank 0
// broadcasts the outcome, so every rank returns the same status. `latest` therefore
// moves only after every shard is complete; a crash at any point leaves the previous
// checkpoint current. Afterwards rank 0 deletes the temporary files of earlier torn
// saves and the tags beyond keep_last.
#pragma once

#include <string>

#include "checkpoint/manifest.h"
#include "checkpoint/state_view.h"
#include "comm/process_group.h"
#include "core/progress_fn.h"
#include "core/status.h"

namespace zt {

struct SaveRequest {
  std::string save_dir;
  std::string tag;            // e.g. "global_step200"
  Manifest meta;              // model, layout, engine, config, kinds; tensors/files/pieces are filled in
  int keep_last = 0;          // 0 keeps every checkpoint
  ProgressFn progress;        // optional: this rank's shard being written (bytes)
};

// Collective over `world` (a single-process group for one process).
Status save_checkpoint(ProcessGroup* world, const RankStateView& view, const SaveRequest& request);

// A weights-only checkpoint of a whole model (one process, no tp), written by this
// process alone: parameter-server runs (rank 0 holds the gathered weights) and import.
// request.meta's layout and engine describe the run; its kinds become {"param"}.
Status save_whole_params(const ParamTable& table, const float* params, SaveRequest request);

// The tag zerotrain uses for step N: "global_stepN".
std::string step_tag(int64_t step);

}  // namespace zt
