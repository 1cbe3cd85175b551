// ZeroOptions: DeepSpeed's zero_optimization section as the modules that use it declare
// it. Each knob and its default is written once, in the module's own options struct:
// the gradient reducer's bucket and overlap (grad_reducer.h), the model states' all-gather
// bucket and NVMe offload (zero/model_states.h), the ZeRO-3 fetcher's prefetch window and
// persistence threshold (zero/param_fetcher.h). config/ parses the JSON straight into this
// struct (config/ds_sections.cc) and the Trainer hands each part to its module; nothing
// copies a knob from one struct into another on the way.
// Invariant: the runtime fields of the parts (reduce.stage, reduce.backend, fetch.backend,
// fetch.dtype, offload.world_rank) are filled by the Trainer, not read from here.
#pragma once

#include <cstddef>

#include "parallel/data/grad_reducer.h"
#include "parallel/zero/model_states.h"
#include "parallel/zero/param_fetcher.h"
#include "parallel/zero/partition.h"

namespace zt {

struct ZeroOptions {
  ZeroStage stage = ZeroStage::kNone;          // stage
  GradReducerOptions reduce;                   // reduce_bucket_size, overlap_comm
  size_t allgather_bucket_elems = ModelStatesOptions::kAllgatherBucketElems;  // allgather_bucket_size
  ParamFetcherOptions fetch;                   // stage3_prefetch_bucket_size, stage3_param_persistence_threshold
  OffloadOptions offload;                      // offload_optimizer / offload_param
};

}  // namespace zt
