// report_cuda (doctor_cuda.h).
#include "cli/doctor_cuda.h"

#include <cstdio>

#include "backend/cuda/cuda_device.h"

namespace zt {

namespace {

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", digits, v);
  return buf;
}

}  // namespace

std::string describe_cuda_ranks(int nccl_version, int gpus) {
  const std::string staged = "collectives stage through host memory (slow: each waits for the GPU and crosses the "
                             "bus twice)";
  if (nccl_version == 0) return "several ranks: no NCCL here, so " + staged;
  const std::string v = std::to_string(nccl_version / 10000) + "." + std::to_string((nccl_version % 10000) / 100) + "." +
                        std::to_string(nccl_version % 100);
  if (nccl_version >= 23000) {
    return "several ranks: NCCL " + v + ", up to " + std::to_string(gpus) + " per host with a GPU each; more share "
           "GPUs with NCCL_MULTI_RANK_GPU_ENABLE=1";
  }
  return "several ranks: NCCL " + v + " with a GPU each, up to " + std::to_string(gpus) + " per host; with more ranks "
         "than GPUs on a host (NCCL before 2.30 refuses two ranks on one GPU) " + staged;
}

#ifndef ZT_HAVE_CUDA

void report_cuda(const std::function<void(const char*, const std::string&)>& fact,
                 const std::function<void(std::string)>&) {
  fact("cuda", "not built (this zerotrain was built without the CUDA backend: ZT_CUDA=off or no CUDA toolkit)");
}

#else

void report_cuda(const std::function<void(const char*, const std::string&)>& fact,
                 const std::function<void(std::string)>& problem) {
  const StatusOr<int> n = cuda_device_count();
  if (!n.ok()) {
    fact("cuda", "backend built; " + n.status().message());
    return;
  }
  for (int i = 0; i < *n; ++i) {
    const StatusOr<CudaDeviceInfo> d = cuda_device_info(i);
    if (!d.ok()) {
      problem("CUDA device " + std::to_string(i) + ": " + d.status().message());
      continue;
    }
    fact("cuda", "device " + std::to_string(i) + ": " + d->describe());
    if (d->cublaslt_version == 0) problem("--device cuda would fail: " + d->cublaslt_error);
    if (i == 0) fact("cuda ranks", describe_cuda_ranks(d->nccl_version, *n));
  }
  const StatusOr<CudaDeviceInfo> d0 = cuda_device_info(0);
  const StatusOr<CudaMeasurement> m = d0.ok() && d0->cublaslt_version != 0 ? measure_cuda_device(0)
                                                                           : StatusOr<CudaMeasurement>(d0.status());
  if (!m.ok()) {
    fact("cuda speed", "not measured: " + m.status().message());
    return;
  }
  const double peak = d0->dense_bf16_peak_tflops;
  fact("cuda speed", "device 0: bf16 GEMM " + std::to_string(m->gemm_n) + "^3 " + fixed(m->bf16_gemm_tflops, 1) +
                         " TFLOP/s" +
                         (peak > 0 ? " = " + fixed(100.0 * m->bf16_gemm_tflops / peak, 0) +
                                         "% of the card's dense bf16 peak " + fixed(peak, 1)
                                   : " (dense peak unknown for this card)") +
                         "; pinned host-to-device " + fixed(m->h2d_gbs, 1) + " GB/s, device-to-host " +
                         fixed(m->d2h_gbs, 1) + " GB/s");
}

#endif

}  // namespace zt
