// Quantize-dequantize ("fake quantization") of fp32 values in place, with DeepSpeed's
// compression arithmetic (compression/utils.py SymQuantizer, AsymQuantizer,
// TernaryQuantizer, BinaryQuantizer; docs/design/deepspeed-efficiency-rules.md 5.2), every
// operation in fp32 as torch computes it on fp32 tensors:
//   x is cut into `groups` equal contiguous groups (n % groups == 0); per group, with
//   q = 2^bits and round-half-to-even:
//   bits >= 3, symmetric:  s = 2 max(|min|, |max|) / q; out = clamp(round(x / s), -q/2, q/2 - 1) * s
//   bits >= 3, asymmetric: s = (max - min) / q; zp = round(min / s) * s;
//                          out = clamp(round((x - zp) / s), 0, q - 1) * s + zp
//   bits 2 (ternary, symmetric): m = mean|x|, t = 0.7 m, a = mean of |x| over |x| > t;
//                                out = a sign(x) where |x| > t, else 0
//   bits 1 (binary, symmetric):  out = mean|x| sign(x)
// An all-zero group gives NaN for bits >= 3 (0/0) as DeepSpeed's does; the means sum in
// double (torch's reduction order is not reproduced: the oracle test allows their rounding).
// Thread-safety: pure; groups run in parallel.
#pragma once

#include <cstdint>

namespace zt {

void fake_quant(float* x, int64_t n, int64_t groups, int bits, bool symmetric);

}  // namespace zt
