// ZeRO++'s quantized weight all-gather (qwZ, `zero_quantized_weights`): a ZeRO-3 layer
// gather in which every rank sends its part as int8 blocks with one fp32 scale each, and
// every rank (the owner included) computes with the dequantized parameters, so all ranks
// hold the same values.
//
// Rounding, as DeepSpeed's symmetric 8-bit quantizer (csrc/includes/quantization_utils.h):
// per block, absmax = max |x|; scale = 2^8 / (2 absmax) (1 when absmax is 0); q =
// clamp(round_half_even(x scale), -128, 127); the wire keeps 1 / scale, and x' = q / scale.
// Error: |x - x'| <= absmax / 256 where |x scale| <= 127.5, and <= absmax / 128 for the top
// half step that clamps to 127 (x within absmax / 256 of +absmax): one block's bound is
// absmax / 128. The fp32 arithmetic adds at most 4 roundings of 2^-24 absmax (scale, its
// inverse, x scale and q / scale).
// Blocks: DeepSpeed's CUDAQuantizer grouping of a part of n elements (qwz_groups): the
// fewest groups above n / 8000 whose size is a multiple of 8 dividing n, doubled while the
// group stays above 8000 elements; a part whose size is not a multiple of 8 (zerotrain's
// partition does not pad) is cut into ceil(n / 8000) near-equal blocks.
// Wire: per rank, its n int8 values padded to 4 bytes, then its block scales (fp32): about
// n / 4 + n / 8000 words against n (fp32) or n / 2 (16-bit) without qwZ.
// Host memory only. Thread-safety: one training thread per rank.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "comm/process_group.h"
#include "core/status.h"
#include "tensor/dtype.h"

namespace zt {

// Blocks of a part of n elements (0 for n == 0) and each block's first element.
std::vector<size_t> qwz_block_starts(size_t n);

// Quantizes n values (as float) into q and scales (1 / scale per block), and the inverse.
void qwz_quantize(const float* x, size_t n, int8_t* q, float* inv_scales);
void qwz_dequantize(const int8_t* q, const float* inv_scales, size_t n, float* x);

// Starts the gather of `counts` (one part per rank, in elements of dtype) into dst, which
// holds this rank's part in place. The returned work dequantizes every part into dst when
// waited for.
StatusOr<WorkHandle> quantized_all_gather(ProcessGroup* group, void* dst, const std::vector<size_t>& counts, DType dtype);

}  // namespace zt
