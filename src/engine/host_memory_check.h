// The run's host-memory check, before anything is allocated: this rank's estimate of what
// it keeps in host memory (every byte on the CPU; on a device, offload's host part), times
// the ranks on this host, against what the host has available. Too much stops every rank
// at once with ResourceExhausted naming both figures and the ways out, instead of the
// kernel's OOM killer ending one rank mid-step (DeepSpeed #3606: a 7B model's offload set-up
// killed on a 94 GB host).
// Invariants: collective over `world` when it is not null (every rank learns of any
// rank's refusal in one agreement); nothing is refused where the host's memory is unknown.
#pragma once

#include <cstddef>

#include "comm/process_group.h"
#include "core/status.h"
#include "engine/trainer.h"
#include "parallel/grid.h"

namespace zt {

// The ranks on this host by the launcher's variables (mpirun, srun, torchrun), else 1.
int ranks_on_this_host();

// The verdict for `need_per_rank` bytes on each of `local_ranks` ranks and `available`
// bytes (0: unknown, never refused); `device` says the figure is offload's host part.
Status host_memory_verdict(size_t need_per_rank, int local_ranks, size_t available, bool device);

// This rank's estimate (o.layout is its layout; grid and rank place it) through the
// verdict, agreed over `world`.
Status check_host_memory(const TrainerOptions& o, const RankGrid& grid, int rank, ProcessGroup* world);

}  // namespace zt
