// bias_grad's documented summation order (kernels/cuda/column_reduce.cuh) on the host, in
// fp32, for the tests that compare the CUDA kernel with it bit for bit: the GPU test
// (kernels/cuda/gemm_lt_test.cc) and the CPU emulation's (kernels/cuda/emulation/).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace zt::testing {

// dbias + the column sums of dout (N, OC): per 256-row chunk, 8 row lanes each summing rows
// lane, lane + 8, ... in order, the lanes joined by the fixed tree, the chunks added in order
// from 0, and the total added to dbias once.
inline std::vector<float> bias_grad_in_order(const std::vector<float>& dout, const std::vector<float>& dbias,
                                             int64_t N, int OC) {
  std::vector<float> out = dbias;
  for (int o = 0; o < OC; ++o) {
    float total = 0.0f;
    for (int64_t r0 = 0; r0 < N; r0 += 256) {
      float s[8];
      for (int lane = 0; lane < 8; ++lane) {
        s[lane] = 0.0f;
        for (int64_t r = r0 + lane; r < std::min<int64_t>(r0 + 256, N); r += 8) s[lane] += dout[r * OC + o];
      }
      total += ((s[0] + s[4]) + (s[2] + s[6])) + ((s[1] + s[5]) + (s[3] + s[7]));
    }
    out[o] += total;
  }
  return out;
}

}  // namespace zt::testing
