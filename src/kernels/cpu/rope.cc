// Rotary position embedding (see rope.h): the fp32 table and the pairwise rotation,
// plain loops over (token, head) rows that the compiler vectorises.
#include "kernels/cpu/rope.h"

#include <cmath>

namespace zt {

namespace {

// out = inp turned by sign * angle; sign = -1 is the inverse rotation. Each pair is read
// before it is written, so out may alias inp.
void rope_rotate(float* out, const float* inp, const float* freqs, int B, int T, int NH, int HD, int pos0,
                 float sign) {
  const int half = HD / 2;
  const int64_t rows = static_cast<int64_t>(B) * T;
#pragma omp parallel for schedule(static)
  for (int64_t bt = 0; bt < rows; ++bt) {
    const float* f = freqs + static_cast<int64_t>(pos0 + bt % T) * HD;
    for (int h = 0; h < NH; ++h) {
      const int64_t off = (bt * NH + h) * HD;
      const float* x = inp + off;
      float* y = out + off;
      for (int i = 0; i < half; ++i) {
        const float c = f[2 * i], s = sign * f[2 * i + 1];
        const float a = x[i], b = x[i + half];
        y[i] = a * c - b * s;
        y[i + half] = b * c + a * s;
      }
    }
  }
}

}  // namespace

void rope_table(float* freqs, int max_T, int HD, const double* inv_freq_table) {
  const int half = HD / 2;
#pragma omp parallel for schedule(static)
  for (int p = 0; p < max_T; ++p) {
    for (int i = 0; i < half; ++i) {
      const double inv_freq = inv_freq_table[i];
      const double angle = static_cast<double>(p) * inv_freq;
      freqs[(static_cast<int64_t>(p) * half + i) * 2] = static_cast<float>(std::cos(angle));
      freqs[(static_cast<int64_t>(p) * half + i) * 2 + 1] = static_cast<float>(std::sin(angle));
    }
  }
}

void rope_forward(float* out, const float* inp, const float* freqs, int B, int T, int NH, int HD, int pos0) {
  rope_rotate(out, inp, freqs, B, T, NH, HD, pos0, 1.0f);
}

void rope_backward(float* dinp, const float* dout, const float* freqs, int B, int T, int NH, int HD, int pos0) {
  rope_rotate(dinp, dout, freqs, B, T, NH, HD, pos0, -1.0f);
}

}  // namespace zt
