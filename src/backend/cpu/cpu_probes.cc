// The CPU backend's self-description; see cpu_probes.h.
#include "backend/cpu/cpu_probes.h"

#include <dnnl.h>
#include <dnnl_debug.h>

#include <algorithm>
#include <vector>

#include "core/timer.h"
#include "kernels/cpu/elementwise.h"
#include "kernels/cpu/fma_peak.h"
#include "kernels/cpu/gemm.h"
#include "kernels/cpu/gemm_bf16.h"
#include "kernels/cpu/gemm_path.h"
#include "kernels/cpu/half_convert.h"

namespace zt {

namespace {

const char* library_name(GemmLibrary l) { return l == GemmLibrary::kOpenBlas ? "openblas" : "onednn"; }

// Best-of-repetitions GFLOP/s of run() doing one n^3 GEMM, after one warm-up call.
template <typename Run>
double best_gflops(int n, double seconds, const Run& run) {
  run();  // warm-up: thread pools, packing buffers, primitive creation
  double best = 1e30;
  Stopwatch total;
  do {
    Stopwatch sw;
    run();
    best = std::min(best, sw.seconds());
  } while (total.seconds() < seconds);
  return 2.0 * n * n * n / best / 1e9;
}

}  // namespace

GemmPathReport gemm_path_report() {
  StatusOr<GemmPath> selected = select_gemm_path();
  const GemmPath p = selected.ok() ? selected.value() : gemm_path_for(GemmPolicy::kAuto);
  GemmPathReport r;
  r.selected = selected.status();
  r.describe = p.describe();
  r.forward_library = library_name(p.forward);
  r.backward_library = library_name(p.backward);
  r.openblas_version = p.openblas_version;
  r.openblas_core = p.openblas_core;
  r.suggested_core = p.suggested_core;
  r.onednn_version = p.onednn_version;
  r.openblas_core_forced = p.openblas_core_forced;
  r.openblas_sound = p.openblas_sound();
  r.uses_slow_core = p.uses_slow_core();
  r.cpu_isa = p.cpu_isa;
  r.openblas_core_isa = p.openblas_core_isa;
  r.warning = p.warning();
  r.blas_threading = blas_threading_name(p.blas);
  r.blas_shares_openmp = p.blas == BlasThreading::kOpenMp;
  r.onednn_runtime = p.onednn_runtime;
  r.onednn_own_pool = p.onednn_own_pool();
  return r;
}

GemmSpeed measure_gemm_speed(int n, double seconds) {
  const size_t size = static_cast<size_t>(n) * n;
  std::vector<float> a(size), b(size), c(size);
  for (size_t i = 0; i < size; ++i) {
    a[i] = 0.01f * static_cast<float>(i % 13);
    b[i] = 0.02f * static_cast<float>(i % 7);
  }
  GemmSpeed s;
  s.forward_gflops = best_gflops(n, seconds / 3, [&] {
    sgemm(Trans::kNo, Trans::kYes, n, n, n, 1.0f, a.data(), n, b.data(), n, 0.0f, c.data(), n);
  });
  s.backward_gflops = best_gflops(n, seconds / 3, [&] {
    sgemm(Trans::kNo, Trans::kNo, n, n, n, 1.0f, a.data(), n, b.data(), n, 0.0f, c.data(), n);
  });
  StatusOr<std::string> impl = bf16_gemm_impl(n, n, n);
  if (!impl.ok()) {
    s.bf16_impl = impl.status().message();
    return s;
  }
  s.bf16_impl = impl.value();
  s.bf16_blocks = bf16_vocabulary_blocks();
  std::vector<bf16_t> ah(size), bh(size);
  cast_f32_to_bf16(ah.data(), a.data(), static_cast<int64_t>(size));
  cast_f32_to_bf16(bh.data(), b.data(), static_cast<int64_t>(size));
  s.bf16_gflops = best_gflops(n, seconds / 3, [&] {
    gemm_bf16(Trans::kNo, Trans::kYes, n, n, n, 1.0f, ah.data(), n, bh.data(), n, 0.0f, c.data(), n);
  });
  return s;
}

double measure_fma_peak(int threads, double seconds) { return measure_fma_peak_gflops(threads, seconds); }

std::string onednn_isa() {
  const char* name = dnnl_cpu_isa2str(dnnl_get_effective_cpu_isa());
  if (name == nullptr) return "unknown";
  const std::string s(name);
  return s.rfind("cpu_isa_", 0) == 0 ? s.substr(8) : s;
}

const char* f16_conversion_name() { return f16_uses_f16c() ? "F16C" : "scalar"; }

}  // namespace zt
