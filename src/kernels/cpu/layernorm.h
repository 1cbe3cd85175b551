// LayerNorm over the last dimension, eps = 1e-5 (GPT-2's layer_norm_epsilon).
// Forward saves per-row mean and 1/std for the backward.
#pragma once

#include <cstdint>

#include "kernels/cpu/kernel_table.h"

namespace zt {

// out, inp: (N, C); weight, bias: (C); mean, rstd: (N). out = (inp - mean) * rstd * weight + bias.
inline void layernorm_forward(float* out, float* mean, float* rstd, const float* inp, const float* weight,
                              const float* bias, int64_t N, int C) {
  cpu_kernels().layernorm_forward(out, mean, rstd, inp, weight, bias, N, C);
}

// dinp += dL/dinp (the input is on the residual stream, so it accumulates);
// dweight += sum_rows dout * normalized; dbias += sum_rows dout.
inline void layernorm_backward(float* dinp, float* dweight, float* dbias, const float* dout, const float* inp,
                               const float* weight, const float* mean, const float* rstd, int64_t N, int C) {
  cpu_kernels().layernorm_backward(dinp, dweight, dbias, dout, inp, weight, mean, rstd, N, C);
}

}  // namespace zt
