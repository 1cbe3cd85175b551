// The run's host-memory check (host_memory_check.h).
#include "engine/host_memory_check.h"

#include <algorithm>
#include <string>

#include "core/launcher_env.h"
#include "core/memory_stats.h"
#include "engine/memory_estimate.h"
#include "engine/parallel_setup.h"
#include "engine/rank_sync.h"

namespace zt {

int ranks_on_this_host() { return std::max(1, launcher_local_place().size); }

Status host_memory_verdict(size_t need_per_rank, int local_ranks, size_t available, bool device) {
  const double need = static_cast<double>(need_per_rank) * local_ranks;
  if (available == 0 || need <= static_cast<double>(available)) return Status::OK();
  return Status::ResourceExhausted(
      "host memory: this host's " + std::to_string(local_ranks) + " rank(s) would hold about " + format_bytes(need) +
      (device ? " (offload's host part: " : " (the model states, activations and buffers: ") +
      format_bytes(static_cast<double>(need_per_rank)) + " a rank, by the estimate) and " +
      format_bytes(static_cast<double>(available)) + " is available; " +
      (device ? "offload the optimizer state to NVMe (offload_optimizer.device \"nvme\"), or spread the states over "
                "more ranks or hosts (a higher ZeRO stage)"
              : "use a higher ZeRO stage over more ranks or hosts, offload the optimizer state to NVMe, activation "
                "checkpointing or a smaller micro-batch") +
      "; `zerotrain estimate` shows where the bytes go");
}

Status check_host_memory(const TrainerOptions& o, const RankGrid& grid, int rank, ProcessGroup* world) {
  const Backend& b = backend_or_cpu(o.backend);
  const ZeroGroupPlace z = zero_group_place(grid, rank, o.zero.stage);
  StatusOr<MemoryEstimate> e = estimate_rank_memory(o, z.size, z.rank, grid.pp(), grid.coord(rank).pp);
  Status mine;  // a run the estimate does not describe is not judged
  if (e.ok()) {
    const size_t need = b.host() ? e->total() : e->host_bytes;
    mine = host_memory_verdict(need, ranks_on_this_host(), available_host_memory(), !b.host());
  }
  ZT_ASSIGN_OR_RETURN(const double refused, sum_over_ranks(world, mine.ok() ? 0.0 : 1.0));
  if (mine.ok() && refused > 0) {
    return Status::ResourceExhausted("host memory: another rank's host cannot hold its part of this run (its message "
                                     "says how much)");
  }
  return mine;
}

}  // namespace zt
