// FMA-chain peak probe (AVX-512 or AVX2 via function target attributes).
#include "kernels/cpu/fma_peak.h"

#include <immintrin.h>
#include <omp.h>

#include <algorithm>

#include "core/cpu_features.h"
#include "core/timer.h"

namespace zt {

namespace {

constexpr int kChains = 12;

__attribute__((target("avx512f"))) float chains512(long iters) {
  __m512 a[kChains];
  const __m512 b = _mm512_set1_ps(0.999f), c = _mm512_set1_ps(0.001f);
  for (int i = 0; i < kChains; ++i) a[i] = _mm512_set1_ps(static_cast<float>(i));
  for (long it = 0; it < iters; ++it) {
#pragma GCC unroll 12
    for (int i = 0; i < kChains; ++i) a[i] = _mm512_fmadd_ps(a[i], b, c);
  }
  __m512 s = a[0];
  for (int i = 1; i < kChains; ++i) s = _mm512_add_ps(s, a[i]);
  return _mm512_reduce_add_ps(s);
}

__attribute__((target("avx2,fma"))) float chains256(long iters) {
  __m256 a[kChains];
  const __m256 b = _mm256_set1_ps(0.999f), c = _mm256_set1_ps(0.001f);
  for (int i = 0; i < kChains; ++i) a[i] = _mm256_set1_ps(static_cast<float>(i));
  for (long it = 0; it < iters; ++it) {
#pragma GCC unroll 12
    for (int i = 0; i < kChains; ++i) a[i] = _mm256_fmadd_ps(a[i], b, c);
  }
  alignas(32) float out[8];
  __m256 s = a[0];
  for (int i = 1; i < kChains; ++i) s = _mm256_add_ps(s, a[i]);
  _mm256_store_ps(out, s);
  return out[0];
}

}  // namespace

double measure_fma_peak_gflops(int threads, double seconds) {
  const Isa isa = detect_isa();
  const int width = isa == Isa::kAvx512 ? 16 : (isa == Isa::kAvx2 ? 8 : 0);
  if (width == 0) return 0.0;
  // ~3.5e9 FMA instructions per second per core is a safe overestimate for sizing.
  const long iters = std::max(1000L, static_cast<long>(seconds / 5.0 * 3.5e9 / kChains));
  double best = 0.0;
  volatile float sink = 0.0f;
  for (int rep = 0; rep < 5; ++rep) {
    float partial = 0.0f;
    Stopwatch sw;
#pragma omp parallel num_threads(threads) reduction(+ : partial)
    partial += width == 16 ? chains512(iters) : chains256(iters);
    const double gflops = threads * static_cast<double>(iters) * kChains * width * 2 / sw.seconds() / 1e9;
    best = std::max(best, gflops);
    sink = sink + partial;
  }
  return best;
}

}  // namespace zt
