// Launch helpers for zerotrain's CUDA kernels (host side): grid sizes for grid-stride
// loops, and the check after every launch. A launch error is a broken invariant (bad
// configuration, kernel not built for this GPU), so it aborts naming the kernel and
// CUDA's message; errors of the asynchronous work itself surface at the backend's
// synchronize() as a Status (backend/cuda/).
// Thread-safety: pure functions.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace zt::cuda {

constexpr int kThreads = 256;

// Blocks for a grid-stride loop over n elements: enough to fill the GPU, never more
// than the work needs.
inline unsigned grid_for(int64_t n, int threads = kThreads) {
  const int64_t want = (n + threads - 1) / threads;
  const int64_t cap = 132 * 32;  // 32 blocks per SM of an H100/H200 covers every GPU we build for
  return static_cast<unsigned>(want < 1 ? 1 : (want < cap ? want : cap));
}

// Aborts with the kernel's name and CUDA's error string if the last launch failed.
void check_launch(const char* kernel);

}  // namespace zt::cuda

// ZT_LAUNCH(grid, block, stream, kernel)(args...) is kernel<<<grid, block, 0, stream>>>(args...),
// or, built for the CPU emulation (emulation/cuda_keywords.h), the emulated grid of
// emulation/lanes.h. The kernel comes last, so a template's commas need no parentheses.
#ifdef ZT_CUDA_EMULATION
#include "kernels/cuda/emulation/lanes.h"
#define ZT_LAUNCH(grid, block, stream, ...) ::zt::emu::launcher(grid, block, stream, __VA_ARGS__)
#else
#define ZT_LAUNCH(grid, block, stream, ...) __VA_ARGS__<<<grid, block, 0, stream>>>
#endif
