// The token and position embedding on the GPU (contract: ActivationOps' encoder_forward /
// encoder_backward), bit for bit the CPU kernel's results: the forward adds wte[token]
// and wpe[t] in fp32 and rounds once; the backward adds each row of dout into its
// token's dwte row and its position's dwpe row in row order, as the CPU's loop does, with
// no atomics. For that the rows are bucketed by token on the host, from the host copy of
// the tokens (llm.c's deterministic encoder backward does the same): EncoderBuckets.
// Pointers are device memory; wpe and dwpe may be null (no position table: Llama).
// Thread-safety: as elementwise.h.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <vector>

#include "tensor/dtype.h"

namespace zt::cuda {

// The rows of a micro-batch grouped by token, rows ascending within each group.
struct EncoderBuckets {
  std::vector<int32_t> rows;    // (B T): row indices, grouped
  std::vector<int32_t> starts;  // (groups + 1): group g is rows[starts[g] .. starts[g + 1])
  std::vector<int32_t> tokens;  // (groups): the token of each group
};
EncoderBuckets encoder_buckets(const int32_t* host_tokens, int64_t rows);

// The device copy of a bucketing: three arrays in one allocation-free view.
struct DeviceBuckets {
  const int32_t* rows;
  const int32_t* starts;
  const int32_t* tokens;
  int32_t groups;
};

// out (B, T, C) = wte[tokens] + wpe[t]; tokens (B, T) device.
void encoder_forward(DType t, void* out, const int32_t* tokens, const void* wte, const void* wpe, int B, int T, int C,
                     cudaStream_t stream);
// dwte[token] += dout rows of that token, dwpe[t] += dout[b, t] over b, in row order (fp32).
void encoder_backward(DType t, float* dwte, float* dwpe, const void* dout, const DeviceBuckets& buckets, int B, int T,
                      int C, cudaStream_t stream);

// out (B, T, NH, HD) = the rotary rotation of inp by freqs (max_T, HD/2, 2) at positions
// pos0 + t; sign = -1 rotates back (the backward). out may alias inp. Bit for bit the
// CPU's rope_forward / rope_backward (kernels/cpu/rope.cc).
void rope_rotate(DType t, void* out, const void* inp, const float* freqs, int B, int T, int NH, int HD, int pos0,
                 float sign, cudaStream_t stream);

}  // namespace zt::cuda
