// The launcher's local rank and size, and the pinning applied (see thread_pinning.h).
#include "engine/thread_pinning.h"

#include <cstdlib>
#include <string>

#include "core/cpu_topology.h"
#include "core/launcher_env.h"
#include "core/threads.h"

namespace zt {

PinningResult pin_compute_threads(bool enabled) {
  const CpuTopology t = cpu_topology();
  PinningResult r{t.describe(), "not pinned: training.pin_threads is false"};
  if (!enabled) return r;
  if (const char* v = std::getenv("ZT_PIN_THREADS"); v != nullptr && std::string(v) == "0") {
    r.decision = "not pinned: ZT_PIN_THREADS=0";
    return r;
  }
  const LocalPlace place = launcher_local_place();
  const PinPlan plan = pin_plan(t, num_threads(), place.rank, place.size);
  r.decision = plan.why;
  if (!plan.cpus.empty() && !pin_threads(plan.cpus)) r.decision = "not pinned: Linux refused the affinity";
  return r;
}

}  // namespace zt
