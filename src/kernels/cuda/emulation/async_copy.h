// async_copy.cuh's copies for the CPU emulation (lanes.h): each happens when issued, and
// the commits and waits are empty. The bytes are the same; a kernel that read a tile before
// its wait would pass here and not on a GPU, so the emulation checks arithmetic and
// layouts, not the waiting.
// Included by async_copy.cuh under ZT_CUDA_EMULATION, inside whatever namespace the
// translation unit calls zt::cuda (cuda_keywords.h renames it).
#pragma once

#include <cstring>

namespace zt::cuda {

inline void copy16_async(void* to, const void* from, bool valid = true) {
  if (valid) {
    std::memcpy(to, from, 16);
  } else {
    std::memset(to, 0, 16);
  }
}

inline void copy4_async(void* to, const void* from, bool valid = true) {
  if (valid) {
    std::memcpy(to, from, 4);
  } else {
    std::memset(to, 0, 4);
  }
}

inline void commit_loads() {}

template <int N>
inline void wait_loads() {}

}  // namespace zt::cuda
