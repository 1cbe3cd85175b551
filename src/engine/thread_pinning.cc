// The launcher's local rank and size, and the pinning applied (see thread_pinning.h).
#include "engine/thread_pinning.h"

#include <cstdlib>
#include <string>

#include "core/cpu_topology.h"
#include "core/threads.h"

namespace zt {

namespace {

int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  char* end = nullptr;
  const long n = std::strtol(v, &end, 10);
  return end != v && *end == '\0' && n >= 0 ? static_cast<int>(n) : fallback;
}

// (local rank, local size); size 0 when no launcher says.
std::pair<int, int> local_place() {
  if (std::getenv("OMPI_COMM_WORLD_LOCAL_SIZE") != nullptr) {
    return {env_int("OMPI_COMM_WORLD_LOCAL_RANK", 0), env_int("OMPI_COMM_WORLD_LOCAL_SIZE", 0)};
  }
  if (std::getenv("SLURM_LOCALID") != nullptr) {  // "SLURM_NTASKS_PER_NODE" is set with --ntasks-per-node
    return {env_int("SLURM_LOCALID", 0), env_int("SLURM_NTASKS_PER_NODE", 0)};
  }
  return {0, 0};
}

}  // namespace

PinningResult pin_compute_threads(bool enabled) {
  const CpuTopology t = cpu_topology();
  PinningResult r{t.describe(), "not pinned: training.pin_threads is false"};
  if (!enabled) return r;
  if (const char* v = std::getenv("ZT_PIN_THREADS"); v != nullptr && std::string(v) == "0") {
    r.decision = "not pinned: ZT_PIN_THREADS=0";
    return r;
  }
  const auto [local_rank, local_size] = local_place();
  const PinPlan plan = pin_plan(t, num_threads(), local_rank, local_size);
  r.decision = plan.why;
  if (!plan.cpus.empty() && !pin_threads(plan.cpus)) r.decision = "not pinned: Linux refused the affinity";
  return r;
}

}  // namespace zt
