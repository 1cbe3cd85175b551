// measure_cuda_device (cuda_device.h): a bf16 n x n x n GEMM through cuBLASLt on random
// data and pinned 1 GiB copies each way, timed with CUDA events; medians of 5 repeats.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <vector>

#include "backend/cuda/cuda_device.h"
#include "kernels/cuda/fill.h"
#include "kernels/cuda/gemm_lt.h"

namespace zt {

namespace {

Status ok(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return Status::OK();
  return Status::Internal(std::string("measuring the CUDA device: ") + what + ": " + cudaGetErrorString(e));
}

// Device and pinned host memory, and the stream and events of one measurement.
struct Scratch {
  std::vector<void*> device, pinned;
  cudaStream_t stream = nullptr;
  cudaEvent_t start = nullptr, stop = nullptr;
  ~Scratch() {
    for (void* p : device) cudaFree(p);
    for (void* p : pinned) cudaFreeHost(p);
    if (start != nullptr) cudaEventDestroy(start);
    if (stop != nullptr) cudaEventDestroy(stop);
    if (stream != nullptr) cudaStreamDestroy(stream);
  }
  StatusOr<void*> alloc(size_t bytes) {
    void* p = nullptr;
    ZT_RETURN_IF_ERROR(ok(cudaMalloc(&p, bytes), "cudaMalloc"));
    device.push_back(p);
    return p;
  }
  StatusOr<void*> alloc_pinned(size_t bytes) {
    void* p = nullptr;
    ZT_RETURN_IF_ERROR(ok(cudaHostAlloc(&p, bytes, cudaHostAllocDefault), "cudaHostAlloc"));
    pinned.push_back(p);
    return p;
  }
};

// Median milliseconds of 5 runs of f after one warm-up, each between two events.
template <class F>
StatusOr<double> time_ms(Scratch& s, F&& f) {
  ZT_RETURN_IF_ERROR(f());
  std::vector<double> ms;
  for (int r = 0; r < 5; ++r) {
    ZT_RETURN_IF_ERROR(ok(cudaEventRecord(s.start, s.stream), "cudaEventRecord"));
    ZT_RETURN_IF_ERROR(f());
    ZT_RETURN_IF_ERROR(ok(cudaEventRecord(s.stop, s.stream), "cudaEventRecord"));
    ZT_RETURN_IF_ERROR(ok(cudaEventSynchronize(s.stop), "cudaEventSynchronize"));
    float t = 0.0f;
    ZT_RETURN_IF_ERROR(ok(cudaEventElapsedTime(&t, s.start, s.stop), "cudaEventElapsedTime"));
    ms.push_back(t);
  }
  std::sort(ms.begin(), ms.end());
  return ms[2];
}

StatusOr<double> gemm_tflops(Scratch& s, int n) {
  const size_t elems = static_cast<size_t>(n) * n;
  ZT_ASSIGN_OR_RETURN(void* a, s.alloc(2 * elems));
  ZT_ASSIGN_OR_RETURN(void* b, s.alloc(2 * elems));
  ZT_ASSIGN_OR_RETURN(void* d, s.alloc(2 * elems));
  cuda::fill_uniform(DType::kBF16, a, static_cast<int64_t>(elems), 1, 1.0f, s.stream);
  cuda::fill_uniform(DType::kBF16, b, static_cast<int64_t>(elems), 2, 1.0f, s.stream);
  ZT_ASSIGN_OR_RETURN(auto lt, cuda::LtGemm::create());
  ZT_ASSIGN_OR_RETURN(const double ms, time_ms(s, [&] {
                        return cuda::linear_forward(*lt, DType::kBF16, d, a, b, nullptr, nullptr, n, n, n, s.stream);
                      }));
  return 2.0 * n * static_cast<double>(n) * n / (ms * 1e-3) / 1e12;
}

}  // namespace

StatusOr<CudaMeasurement> measure_cuda_device(int index, int gemm_n, size_t copy_bytes) {
  ZT_RETURN_IF_ERROR(cuda_device_count().status());
  ZT_RETURN_IF_ERROR(ok(cudaSetDevice(index), "cudaSetDevice"));
  Scratch s;
  ZT_RETURN_IF_ERROR(ok(cudaStreamCreateWithFlags(&s.stream, cudaStreamNonBlocking), "cudaStreamCreate"));
  ZT_RETURN_IF_ERROR(ok(cudaEventCreate(&s.start), "cudaEventCreate"));
  ZT_RETURN_IF_ERROR(ok(cudaEventCreate(&s.stop), "cudaEventCreate"));
  CudaMeasurement m;
  m.gemm_n = gemm_n;
  ZT_ASSIGN_OR_RETURN(m.bf16_gemm_tflops, gemm_tflops(s, gemm_n));
  m.copy_bytes = copy_bytes;
  ZT_ASSIGN_OR_RETURN(void* dev, s.alloc(copy_bytes));
  ZT_ASSIGN_OR_RETURN(void* host, s.alloc_pinned(copy_bytes));
  std::fill_n(static_cast<unsigned char*>(host), copy_bytes, static_cast<unsigned char>(0x5a));
  ZT_ASSIGN_OR_RETURN(const double h2d, time_ms(s, [&] {
                        return ok(cudaMemcpyAsync(dev, host, copy_bytes, cudaMemcpyHostToDevice, s.stream), "H2D copy");
                      }));
  ZT_ASSIGN_OR_RETURN(const double d2h, time_ms(s, [&] {
                        return ok(cudaMemcpyAsync(host, dev, copy_bytes, cudaMemcpyDeviceToHost, s.stream), "D2H copy");
                      }));
  m.h2d_gbs = static_cast<double>(copy_bytes) / (h2d * 1e-3) / 1e9;
  m.d2h_gbs = static_cast<double>(copy_bytes) / (d2h * 1e-3) / 1e9;
  return m;
}

}  // namespace zt
