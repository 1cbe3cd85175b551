// The per-rank compute peak and the backend's warning; see peak.h.
#include "backend/peak.h"

#include "kernels/cpu/fma_peak.h"
#include "kernels/cpu/gemm_bf16.h"
#include "kernels/cpu/gemm_path.h"

namespace zt {

namespace {

double cpu_peak_factor(DType compute) {
  if (compute != DType::kBF16) return 1.0;
  const StatusOr<std::string> impl = bf16_gemm_impl(256, 256, 256);
  if (!impl.ok() || impl.value().find("fallback") != std::string::npos) return 1.0;
  return impl.value().find("amx") != std::string::npos ? 0.0 : 2.0;
}

}  // namespace

double rank_peak_flops(const Backend& backend, int threads, double seconds) {
  if (backend.peak_flops() > 0.0) return backend.peak_flops();
  return measure_fma_peak_gflops(threads, seconds) * 1e9 * cpu_peak_factor(backend.compute_dtype());
}

std::string backend_warning(const Backend& backend) {
  return backend.device() == Device::kCpu ? gemm_path().warning() : std::string();
}

}  // namespace zt
