// Embedding lookup and its scatter-add backward.
#include "kernels/cpu/encoder.h"

namespace zt {

void encoder_forward(float* out, const int32_t* tokens, const float* wte, const float* wpe, int B, int T, int C) {
#pragma omp parallel for schedule(static)
  for (int64_t bt = 0; bt < static_cast<int64_t>(B) * T; ++bt) {
    const int t = static_cast<int>(bt % T);
    const float* e = wte + static_cast<int64_t>(tokens[bt]) * C;
    float* o = out + bt * C;
    if (wpe == nullptr) {  // no position table (Llama)
      for (int c = 0; c < C; ++c) o[c] = e[c];
      continue;
    }
    const float* p = wpe + static_cast<int64_t>(t) * C;
    for (int c = 0; c < C; ++c) o[c] = e[c] + p[c];
  }
}

void encoder_backward(float* dwte, float* dwpe, const float* dout, const int32_t* tokens, int B, int T, int C) {
  constexpr int kBlock = 64;
  const int nblocks = (C + kBlock - 1) / kBlock;
  const int64_t rows = static_cast<int64_t>(B) * T;
#pragma omp parallel for schedule(static)
  for (int blk = 0; blk < nblocks; ++blk) {
    const int c0 = blk * kBlock;
    const int c1 = (c0 + kBlock < C) ? c0 + kBlock : C;
    for (int64_t bt = 0; bt < rows; ++bt) {
      const int t = static_cast<int>(bt % T);
      const float* d = dout + bt * C;
      float* e = dwte + static_cast<int64_t>(tokens[bt]) * C;
      for (int c = c0; c < c1; ++c) e[c] += d[c];
      if (dwpe == nullptr) continue;
      float* p = dwpe + static_cast<int64_t>(t) * C;
      for (int c = c0; c < c1; ++c) p[c] += d[c];
    }
  }
}

}  // namespace zt
