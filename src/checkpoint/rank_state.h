// Rank state in checkpoints: the arrays of one rank that mirror no parameter element
// (RankArray, optim/optimizer.h: the 1-bit optimizers' error feedback and schedules).
//
// Saving puts them in the rank's own shard as "rank_state/<name>" (F32 or F64, 1-D) and
// lists them in the manifest's "rank_state" with their rank, size and checksum. They
// belong to that rank of that layout: a resume in the same layout (world, dp, pp, tp,
// ZeRO stage) restores them, checked name by name and size by size; any other layout, or a
// checkpoint without them, restarts them (as DeepSpeed restarts its error feedback on
// every load) and the caller says so.
// Thread-safety: plain functions.
#pragma once

#include <string>
#include <vector>

#include "checkpoint/manifest.h"
#include "checkpoint/safetensors.h"
#include "checkpoint/sharded_load.h"
#include "io/json_strict.h"
#include "optim/optimizer.h"

namespace zt {

// Appends the arrays to `tensors` (they must outlive the write) and returns their
// descriptions for rank 0's manifest.
Json add_rank_state(const std::vector<RankArray>& arrays, const std::string& file, int rank,
                    std::vector<TensorToWrite>* tensors);

// Rank 0: one rank's descriptions into the manifest.
void collect_rank_state(const Json& described, Manifest* m);

// True when `m` holds rank state saved by the layout `now`.
bool rank_state_fits(const Manifest& m, const CheckpointLayout& now);

// Reads `rank`'s arrays into `arrays` (every name and size must match what was saved),
// verifying the shard's checksum and each array's before writing any of them.
Status load_rank_state(const CheckpointRef& ckpt, int rank, const std::vector<RankArray>& arrays);

}  // namespace zt
