// GELU, tanh approximation (GPT-2's "gelu_new"), forward and backward.
#pragma once

#include <cstdint>

#include "kernels/cpu/kernel_table.h"

namespace zt {

// out = gelu(inp), n elements.
inline void gelu_forward(float* out, const float* inp, int64_t n) { cpu_kernels().gelu_forward(out, inp, n); }

// dinp = gelu'(inp) * dout (assignment, not accumulation); dinp may alias dout.
inline void gelu_backward(float* dinp, const float* inp, const float* dout, int64_t n) {
  cpu_kernels().gelu_backward(dinp, inp, dout, n);
}

}  // namespace zt
