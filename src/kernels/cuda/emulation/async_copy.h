// async_copy.cuh's copies for the CPU emulation (lanes.h): issued, committed and waited for
// per thread as cp.async's groups are; a destination holds NaNs from the issue until the wait
// lands the copy, so a tile read before its wait, or a buffer refilled while another thread
// still reads it, shows in the results.
// Included by async_copy.cuh under ZT_CUDA_EMULATION, inside whatever namespace the
// translation unit calls zt::cuda (cuda_keywords.h renames it).
#pragma once

#include "kernels/cuda/emulation/lanes.h"

namespace zt::cuda {

inline void copy16_async(void* to, const void* from, bool valid = true) { ::zt::emu::issue_copy(to, from, 16, valid); }

inline void copy4_async(void* to, const void* from, bool valid = true) { ::zt::emu::issue_copy(to, from, 4, valid); }

inline void commit_loads() { ::zt::emu::commit_copies(); }

template <int N>
inline void wait_loads() {
  ::zt::emu::wait_copies(N);
}

}  // namespace zt::cuda
