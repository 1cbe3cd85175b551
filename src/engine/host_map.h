// Where the ranks of a job run: each rank's host name and local rank, from Slurm's
// environment (SLURM_PROCID, SLURM_LOCALID) when srun started it, else Open MPI's
// (OMPI_COMM_WORLD_LOCAL_RANK); the node is the host's position in the gathered map (the
// world rank itself always comes from MPI). Rank 0 prints the map in the run banner:
//   hosts: 2 (zt-h1: ranks 0,2; zt-h2: ranks 1,3), placement from Open MPI
// Thread-safety: the training thread; describe_host_map is collective over `world`.
#pragma once

#include <string>
#include <vector>

#include "comm/process_group.h"
#include "core/status.h"

namespace zt {

struct RankPlacement {
  std::string host;    // gethostname()
  int local_rank = 0;  // among the ranks of this host
  std::string source;  // "Slurm", "Open MPI", "PMIx" or "one process"
};

// This process's placement from the environment.
RankPlacement rank_placement();

// The banner line for ranks grouped by host name (hosts in order of first rank).
std::string format_host_map(const std::vector<std::string>& host_of_rank, const std::string& source);

// Collective over `world` (null: one process). On rank 0 the banner line, elsewhere "".
StatusOr<std::string> describe_host_map(ProcessGroup* world);

}  // namespace zt
