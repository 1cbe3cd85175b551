// Parameter-server training (issue 7): the options every role of a job shares.
//
// Roles: world ranks [0, servers) are servers, [servers, world) are workers. A job trains
// `steps` global batches; a global batch is W units (one per worker in synchronous mode),
// a unit being one worker's micro-batches: unit u is rank u % W's part of global batch
// u / W in BatchSampler terms, so every mode sees exactly the samples all-reduce data
// parallelism with W ranks sees. Modes (PsMode): kSync applies one averaged update per
// global step after all W pushes (the all-reduce engine's step); kAsync applies each push
// at once; kBounded too, but a worker may run at most `staleness` steps ahead of the
// slowest (staleness 0 runs kSync). Asynchronous modes hand units out dynamically, so a
// fast worker processes more of them.
// Thread-safety: plain values.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "core/status.h"
#include "nn/gpt_training.h"

namespace zt {

enum class PsMode { kSync, kAsync, kBounded };
const char* ps_mode_name(PsMode mode);  // "sync", "async", "bounded"
StatusOr<PsMode> ps_mode_from_name(const std::string& name);  // the inverse; InvalidArgument otherwise

constexpr int64_t kNoUnit = -1;  // "no more work": the job's sample budget is spent

struct PsOptions {
  int servers = 1;
  PsMode mode = PsMode::kSync;
  int64_t staleness = 0;              // kBounded: steps a worker may lead the slowest
  // Gradient push granularity (elements). 0 = not set: config/ makes it the data-parallel
  // reduce bucket (zero_optimization.reduce_bucket_size); a job refuses 0.
  size_t bucket_elems = 0;
  // A worker silent this long after receiving its parameters, or a server silent 1.5x
  // this long, stops the job with a message naming it. 0 = not set: config/ makes it
  // parallel.comm_timeout_s; a job refuses 0.
  double deadline_s = 0.0;
  int slow_worker_rank = -1;          // test hook: this world rank sleeps ...
  double slow_worker_delay_ms = 0.0;  // ... this long at the start of every step

  // kBounded with staleness 0 is kSync.
  PsMode effective_mode() const {
    return mode == PsMode::kBounded && staleness == 0 ? PsMode::kSync : mode;
  }
};

// The model and optimisation of a job: what TrainerOptions holds for all-reduce, plus the
// micro-batches per unit.
struct PsModelOptions : GptTrainingOptions {
  int grad_accum = 1;  // micro-batches per unit
};

}  // namespace zt
