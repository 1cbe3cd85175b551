// 2-byte elements as 32-bit words.
#include "comm/element_gather.h"

#include "core/check.h"

namespace zt {

WorkHandle all_gather_elements(ProcessGroup* group, void* data, std::vector<size_t> counts, size_t elem_bytes) {
  ZT_CHECK(elem_bytes == 2 || elem_bytes == 4, "all_gather_elements: %zu-byte elements", elem_bytes);
  if (elem_bytes == 2) {
    for (size_t& c : counts) {
      ZT_CHECK(c % 2 == 0, "16-bit all-gather segment of odd length %zu", c);
      c /= 2;
    }
  }
  return group->all_gather(static_cast<float*>(data), counts);
}

}  // namespace zt
