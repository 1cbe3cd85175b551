// bf16 linear layer through gemm_bf16 (oneDNN matmul) with fp32 sums.
#include "kernels/cpu/linear_bf16.h"

#include <cstring>
#include <vector>

#include "kernels/cpu/elementwise.h"
#include "kernels/cpu/gemm_bf16.h"

namespace zt {

void linear_forward_bf16(bf16_t* out, const bf16_t* inp, const bf16_t* weight, const bf16_t* bias,
                         const bf16_t* residual, int64_t N, int C, int OC) {
  const size_t n = static_cast<size_t>(N) * OC;
  if (residual != nullptr && residual != out) std::memcpy(out, residual, n * sizeof(bf16_t));
  std::vector<float> bias_f32(bias != nullptr ? OC : 0);  // gemm_bf16_out takes an fp32 bias
  if (bias != nullptr) cast_bf16_to_f32(bias_f32.data(), bias, OC);
  gemm_bf16_out(Trans::kNo, Trans::kYes, static_cast<int>(N), OC, C, inp, C, weight, C,
                bias != nullptr ? bias_f32.data() : nullptr, residual != nullptr, out, OC);
}

void linear_backward_bf16(bf16_t* dinp, float* dweight, float* dbias, const bf16_t* dout, const bf16_t* inp,
                          const bf16_t* weight, int64_t N, int C, int OC) {
  const int n = static_cast<int>(N);
  if (dinp != nullptr) gemm_bf16_out(Trans::kNo, Trans::kNo, n, C, OC, dout, OC, weight, C, nullptr, false, dinp, C);
  gemm_bf16(Trans::kYes, Trans::kNo, OC, C, n, 1.0f, dout, OC, inp, C, 1.0f, dweight, C);
  if (dbias == nullptr) return;
  constexpr int kBlock = 64;
  const int nblocks = (OC + kBlock - 1) / kBlock;
#pragma omp parallel for schedule(static)
  for (int blk = 0; blk < nblocks; ++blk) {
    const int c0 = blk * kBlock, c1 = c0 + kBlock < OC ? c0 + kBlock : OC;
    for (int64_t r = 0; r < N; ++r) {
      const bf16_t* d = dout + r * OC;
      for (int c = c0; c < c1; ++c) {
        const uint32_t u = static_cast<uint32_t>(d[c].bits) << 16;
        float f;
        std::memcpy(&f, &u, 4);
        dbias[c] += f;
      }
    }
  }
}

}  // namespace zt
