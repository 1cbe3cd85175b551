// Token + position embedding (GPT-2's wte and wpe).
#pragma once

#include <cstdint>

namespace zt {

// out (B, T, C) = wte[tokens[b, t]] + wpe[t]. Tokens must be in [0, rows of wte): the
// caller validates them at the batch boundary (a Status, not a kernel check).
void encoder_forward(float* out, const int32_t* tokens, const float* wte, const float* wpe, int B, int T, int C);

// dwte[tokens[b, t]] += dout[b, t]; dwpe[t] += dout[b, t]. Split by column blocks, each
// summing rows in order: deterministic and independent of the thread count.
void encoder_backward(float* dwte, float* dwpe, const float* dout, const int32_t* tokens, int B, int T, int C);

}  // namespace zt
