// The token and position embedding on the GPU (contract: ActivationOps' encoder_forward /
// encoder_backward), bit for bit the CPU kernel's results: the forward adds wte[token]
// and wpe[t] in fp32 and rounds once; the backward adds each row of dout into its
// token's dwte row and its position's dwpe row in row order, as the CPU's loop does, with
// no atomics. For that the rows are grouped by token on the device, by a stable radix sort
// of (token, row) pairs (CUB): each token's rows stay ascending, so one thread per
// (token, channel) adds them in row order, and nothing waits for the host.
// Pointers are device memory; wpe and dwpe may be null (no position table: Llama).
// Thread-safety: as elementwise.h.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "tensor/dtype.h"

namespace zt::cuda {

// Device workspace bytes of encoder_backward for `rows` = B T rows.
size_t encoder_backward_workspace_bytes(int64_t rows);

// out (B, T, C) = wte[tokens] + wpe[t]; tokens (B, T) device.
void encoder_forward(DType t, void* out, const int32_t* tokens, const void* wte, const void* wpe, int B, int T, int C,
                     cudaStream_t stream);
// dwte[token] += dout rows of that token, dwpe[t] += dout[b, t] over b, in row order (fp32);
// tokens (B, T) device; workspace: encoder_backward_workspace_bytes(B T).
void encoder_backward(DType t, float* dwte, float* dwpe, const void* dout, const int32_t* tokens, int B, int T, int C,
                      void* workspace, cudaStream_t stream);

// out (B, T, NH, HD) = the rotary rotation of inp by freqs (max_T, HD/2, 2) at positions
// pos0 + t; sign = -1 rotates back (the backward). out may alias inp. Bit for bit the
// CPU's rope_forward / rope_backward (kernels/cpu/rope.cc).
void rope_rotate(DType t, void* out, const void* inp, const float* freqs, int B, int T, int NH, int HD, int pos0,
                 float sign, cudaStream_t stream);

}  // namespace zt::cuda
