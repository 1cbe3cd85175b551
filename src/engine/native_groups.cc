// adopt_native_groups (native_groups.h).
#include "engine/native_groups.h"

#include <map>

#include "engine/rank_sync.h"

namespace zt {

StatusOr<std::string> adopt_native_groups(ParallelGroups* g, const Backend& backend, const CommOptions& options) {
  if (backend.host() || g->world == nullptr || g->world->size() == 1) return std::string();
  const Status mine = backend.native_groups_usable(*g->world);
  ZT_ASSIGN_OR_RETURN(const double usable, sum_over_ranks(g->world, mine.ok() ? 1.0 : 0.0));
  if (usable < g->world->size()) {
    return "collectives over the host groups, not the device's own: " +
           (mine.ok() ? std::string("another rank cannot use them") : mine.message());
  }
  std::map<ProcessGroup*, ProcessGroup*> made;  // host group -> its native group
  const char* name = "";
  for (ProcessGroup** field : {&g->dp, &g->tp, &g->tied, &g->sp, &g->hpz, &g->edp}) {
    if (*field == nullptr) continue;
    ProcessGroup*& native = made[*field];
    if (native == nullptr) {
      ZT_ASSIGN_OR_RETURN(auto group, backend.native_group(**field, options));
      g->owned.push_back(std::move(group));
      native = g->owned.back().get();
      name = native->backend_name();
    }
    *field = native;
  }
  return std::string("collectives over ") + name +
         (g->pp != nullptr || g->ep != nullptr ? "; pipeline hand-offs and the experts' exchange over the host "
                                                 "group, staged through host memory" : "");
}

}  // namespace zt
