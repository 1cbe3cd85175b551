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

}  // namespace zt
