// Fully connected layer in nn.Linear layout: weight (OC, C), so out = inp @ weight^T.
// The forward can fuse the residual add of a transformer block (out = residual + ...).
#pragma once

#include <cstdint>

namespace zt {

// out: (N, OC) = residual (N, OC, may be null) + bias (OC, may be null) + inp (N, C) @ weight^T.
// out must not alias inp; it may alias residual.
void linear_forward(float* out, const float* inp, const float* weight, const float* bias, const float* residual,
                    int64_t N, int C, int OC);

// partial (N, OC) = inp @ weight^T: a row-parallel layer's local product (linear_forward
// without bias or residual).
void linear_partial(float* partial, const float* inp, const float* weight, int64_t N, int C, int OC);

// dinp (N, C) = dout (N, OC) @ weight, assigned (or skipped when dinp is null);
// dweight (OC, C) += dout^T @ inp; dbias (OC) += column sums of dout (skipped when null).
// The bias reduction runs in fixed row order per column: independent of thread count.
void linear_backward(float* dinp, float* dweight, float* dbias, const float* dout, const float* inp,
                     const float* weight, int64_t N, int C, int OC);

}  // namespace zt
