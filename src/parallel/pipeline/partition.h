// Which transformer blocks each pipeline stage holds (DeepSpeed's partition_method):
// "uniform" gives every stage the same number of blocks (the first stages one more when
// they do not divide evenly); "parameters" balances parameter counts, counting the
// embeddings on the first stage and ln_f plus the LM head's copy of wte on the last,
// so the end stages get fewer blocks (DeepSpeed's default for PipelineModule); "flops"
// balances compute instead: the embedding lookup costs next to nothing while the LM head
// is a (vocabulary x width) matmul, so the first stage gets more blocks and the last
// fewer (zerotrain's default: the pipeline runs at the pace of its slowest stage).
#pragma once

#include <string>
#include <vector>

#include "core/status.h"
#include "nn/gpt_config.h"

namespace zt {

enum class StagePartition { kUniform, kParameters, kFlops };

// Block boundaries: stage s holds blocks [bounds[s], bounds[s + 1]); bounds has S + 1
// entries from 0 to n_layer. InvalidArgument if there are more stages than blocks.
StatusOr<std::vector<int>> partition_stages(const GptConfig& config, int stages, StagePartition method);

}  // namespace zt
