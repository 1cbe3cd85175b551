// From a RankGrid to what one rank runs: its GptLayout (pipeline stage blocks from the
// stage partition, tensor-parallel slice) and its communicators (dp, pp, tp, and the
// tied-weight group of the pipeline's first and last stage), over MPI or, for tests,
// over the in-process thread backend.
#pragma once

#include "comm/mpi_world.h"
#include "comm/thread_world.h"
#include "core/status.h"
#include "nn/gpt_config.h"
#include "nn/gpt_layout.h"
#include "parallel/grid.h"
#include "parallel/pipeline/partition.h"
#include "parallel/zero/partition.h"

namespace zt {

// virtual_stages > 1 (interleaved 1F1B): the partition cuts pp x v virtual stages, and
// the rank holds virtual stages j pp + its stage, j < v, as its chunks.
StatusOr<GptLayout> layout_for_rank(const GptConfig& config, const RankGrid& grid, int rank, StagePartition method,
                                    int virtual_stages = 1);

// The group ZeRO partitions a rank's states over (engine/trainer.h): dp, or with expert
// parallelism at stages 1+ the expert-data-parallel group. Its size and the rank's place.
struct ZeroGroupPlace {
  int size = 1;
  int rank = 0;
};
ZeroGroupPlace zero_group_place(const RankGrid& grid, int rank, ZeroStage stage);

// Collective over the world: every rank calls it with the same grid.
StatusOr<ParallelGroups> make_mpi_groups(MpiWorld& world, const RankGrid& grid);

// For rank `rank` of a ThreadWorld of grid.world_size() ranks; every rank calls it.
ParallelGroups make_thread_groups(ThreadWorld& world, const RankGrid& grid, int rank);

}  // namespace zt
