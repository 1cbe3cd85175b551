// The CUDA device probe and measurements (cuda_device.h).
#include "backend/cuda/cuda_device.h"

#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "kernels/cuda/cublaslt_api.h"
#include "kernels/cuda/fill.h"
#include "kernels/cuda/gemm_lt.h"

namespace zt {

namespace {

Status cuda_ok(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return Status::OK();
  return Status::Internal(std::string(what) + ": " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")");
}

// Dense bf16 tensor rate by datasheet (no sparsity); 0 when the card is not listed.
double dense_bf16_peak(const std::string& name) {
  auto has = [&](const char* s) { return name.find(s) != std::string::npos; };
  if (has("H200") || has("GH200")) return 989.4;
  if (has("H100")) return has("PCIe") ? 756.0 : has("NVL") ? 835.0 : 989.4;
  if (has("A100")) return 312.0;
  if (has("L40S")) return 362.1;
  return 0.0;
}

// A library's version through dlopen (no link dependency), or 0 when it is absent.
template <class R>
R library_version(const char* lib, const char* symbol, R (*call)(void*)) {
  void* h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
  if (h == nullptr) return R{};
  void* f = dlsym(h, symbol);
  return f != nullptr ? call(f) : R{};
}

size_t cudnn_version() {
  return library_version<size_t>("libcudnn.so.9", "cudnnGetVersion",
                                 [](void* f) { return reinterpret_cast<size_t (*)()>(f)(); });
}

int nccl_version() {
  return library_version<int>("libnccl.so.2", "ncclGetVersion", [](void* f) {
    int v = 0;
    return reinterpret_cast<int (*)(int*)>(f)(&v) == 0 ? v : 0;
  });
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

std::string cuda_version_string(int v) { return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10); }
std::string cudnn_version_string(size_t v) {
  return std::to_string(v / 10000) + "." + std::to_string((v % 10000) / 100) + "." + std::to_string(v % 100);
}
std::string cublaslt_version_string(size_t v) { return cudnn_version_string(v); }
std::string nccl_version_string(int v) {
  return std::to_string(v / 10000) + "." + std::to_string((v % 10000) / 100) + "." + std::to_string(v % 100);
}

StatusOr<int> cuda_device_count() {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) return Status::FailedPrecondition(std::string("no CUDA device: ") + cudaGetErrorString(e));
  if (n == 0) return Status::FailedPrecondition("no CUDA device: the driver reports none");
  return n;
}

StatusOr<CudaDeviceInfo> cuda_device_info(int index) {
  ZT_RETURN_IF_ERROR(cuda_device_count().status());
  cudaDeviceProp p{};
  ZT_RETURN_IF_ERROR(cuda_ok(cudaGetDeviceProperties(&p, index), "cudaGetDeviceProperties"));
  CudaDeviceInfo d;
  d.index = index;
  d.name = p.name;
  d.sm_major = p.major;
  d.sm_minor = p.minor;
  d.multiprocessors = p.multiProcessorCount;
  d.memory_bytes = p.totalGlobalMem;
  ZT_RETURN_IF_ERROR(cuda_ok(cudaDriverGetVersion(&d.driver_version), "cudaDriverGetVersion"));
  ZT_RETURN_IF_ERROR(cuda_ok(cudaRuntimeGetVersion(&d.runtime_version), "cudaRuntimeGetVersion"));
  const StatusOr<const cuda::CublasLtApi*> lt = cuda::cublaslt_api();
  if (lt.ok()) {
    d.cublaslt_version = (*lt)->get_version();
  } else {
    d.cublaslt_error = lt.status().message();
  }
  d.cudnn_version = cudnn_version();
  d.nccl_version = nccl_version();
  d.dense_bf16_peak_tflops = dense_bf16_peak(d.name);
  return d;
}

std::string CudaDeviceInfo::describe() const {
  char mem[32];
  std::snprintf(mem, sizeof(mem), "%.1f GiB", static_cast<double>(memory_bytes) / (1u << 30));
  std::string s = name + " (sm_" + std::to_string(sm_major) + std::to_string(sm_minor) + ", " +
                  std::to_string(multiprocessors) + " SMs, " + mem + "), driver " + cuda_version_string(driver_version) +
                  ", runtime " + cuda_version_string(runtime_version);
  s += cublaslt_version != 0 ? ", cuBLASLt " + cublaslt_version_string(cublaslt_version) : ", no cuBLASLt";
  s += cudnn_version != 0 ? ", cuDNN " + cudnn_version_string(cudnn_version) : ", no cuDNN";
  s += nccl_version != 0 ? ", NCCL " + nccl_version_string(nccl_version) : ", no NCCL";
  return s;
}

}  // namespace zt
