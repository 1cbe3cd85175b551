// 16-bit all-gather as 32-bit words.
#include "parallel/zero/typed_gather.h"

#include "core/check.h"

namespace zt {

WorkHandle all_gather_typed(ProcessGroup* group, void* data, std::vector<size_t> counts, DType dtype) {
  if (dtype == DType::kF32) return group->all_gather(static_cast<float*>(data), counts);
  for (size_t& c : counts) {
    ZT_CHECK(c % 2 == 0, "16-bit all-gather segment of odd length %zu", c);
    c /= 2;
  }
  return group->all_gather(static_cast<float*>(data), counts);
}

}  // namespace zt
