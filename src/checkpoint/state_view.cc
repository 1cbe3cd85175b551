// Which elements a rank writes; see state_view.h.
#include "checkpoint/state_view.h"

#include <algorithm>

namespace zt {

std::vector<SavedRange> saved_ranges(const RankStateView& view) {
  std::vector<SavedRange> out;
  const ParamTable& table = *view.table;
  for (int i = 0; i < static_cast<int>(table.specs().size()); ++i) {
    const TensorSpec& s = table.at(i);
    if (s.layer == view.skip_layer) continue;
    if (table.tp_size() > 1 && s.tp_dim < 0 && !view.save_tp_replicated) continue;
    const ElementRange save = s.expert >= 0 && view.expert_save_range ? *view.expert_save_range : view.save_range;
    const size_t lo = std::max(s.offset, save.begin);
    const size_t hi = std::min(s.offset + s.numel, save.end);
    if (lo < hi) out.push_back({i, lo - s.offset, hi - s.offset});
  }
  return out;
}

}  // namespace zt
