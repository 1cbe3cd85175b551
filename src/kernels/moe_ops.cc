// moe_fill, the host helper of the MoE table; see moe_ops.h.
#include "kernels/moe_ops.h"

#include <algorithm>

namespace zt {

std::vector<int64_t> moe_fill(const MoeSlots& s) {
  std::vector<int64_t> fill(static_cast<size_t>(s.E), 0);
  for (int64_t i = 0; i < s.N * s.k; ++i) {
    const int32_t e = s.expert[i];
    if (e >= 0) fill[static_cast<size_t>(e)] = std::max<int64_t>(fill[static_cast<size_t>(e)], s.location[i] + 1);
  }
  return fill;
}

MoeCompact moe_compact(const MoeSlots& s) {
  MoeCompact c;
  c.fill = moe_fill(s);
  c.offset.assign(static_cast<size_t>(s.E) + 1, 0);
  for (int e = 0; e < s.E; ++e) c.offset[static_cast<size_t>(e) + 1] = c.offset[static_cast<size_t>(e)] + c.fill[static_cast<size_t>(e)];
  const size_t nk = static_cast<size_t>(s.N * s.k);
  c.slot_expert.assign(nk, -1);
  c.slot_row.assign(nk, 0);
  for (size_t i = 0; i < nk; ++i) {
    const int32_t e = s.expert[i];
    if (e < 0) continue;
    c.slot_expert[i] = 0;
    c.slot_row[i] = static_cast<int32_t>(c.offset[static_cast<size_t>(e)] + s.location[i]);
  }
  return c;
}

}  // namespace zt
