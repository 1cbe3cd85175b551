// CudaContext (cuda_context.h).
#include "backend/cuda/cuda_context.h"

#include <string>

#include "core/check.h"
#include "core/cpu_features.h"

namespace zt::cuda {

namespace {

CudaContext*& instance() {
  static CudaContext* c = nullptr;
  return c;
}

}  // namespace

void check_ok(const Status& s, const char* what) {
  ZT_CHECK(s.ok(), "CUDA backend, %s: %s", what, s.to_string().c_str());
}

void check_cuda(cudaError_t e, const char* what) {
  ZT_CHECK(e == cudaSuccess, "CUDA backend, %s: %s (%s)", what, cudaGetErrorName(e), cudaGetErrorString(e));
}

bool is_device_memory(const void* p) {
  if (p == nullptr) return false;
  cudaPointerAttributes a{};
  const cudaError_t e = cudaPointerGetAttributes(&a, p);
  if (e == cudaErrorInvalidValue) {  // before CUDA 11: a pointer CUDA never saw; not sticky
    cudaGetLastError();
    return false;
  }
  check_cuda(e, "classifying a pointer");
  return a.type == cudaMemoryTypeDevice || a.type == cudaMemoryTypeManaged;
}

StatusOr<CudaContext*> CudaContext::create(int device) {
  if (instance() != nullptr) {
    if (instance()->device_ != device) {
      return Status::Unimplemented("one CUDA device per process: this process already uses device " +
                                   std::to_string(instance()->device_));
    }
    return instance();
  }
  std::unique_ptr<CudaContext> c(new CudaContext());
  c->device_ = device;
  cudaError_t e = cudaSetDevice(device);
  if (e == cudaSuccess) e = cudaStreamCreateWithFlags(&c->stream_, cudaStreamNonBlocking);
  if (e != cudaSuccess) {
    return Status::FailedPrecondition("CUDA device " + std::to_string(device) + ": " + cudaGetErrorString(e));
  }
  ZT_ASSIGN_OR_RETURN(c->lt_, LtGemm::create());
  c->order_ = cpu_order_for(active_isa());
  instance() = c.release();  // lives as long as the process (arenas of static backends outlive main)
  return instance();
}

CudaContext& CudaContext::get() {
  ZT_CHECK(instance() != nullptr, "the CUDA backend was used before it was created");
  return *instance();
}

void* CudaContext::scratch(Scratch kind, size_t bytes) {
  const int k = static_cast<int>(kind);
  if (bytes > scratch_bytes_[k]) {
    if (scratch_[k] != nullptr) {
      sync("freeing outgrown scratch");
      check_cuda(cudaFree(scratch_[k]), "cudaFree of scratch");
    }
    const size_t want = bytes + bytes / 4;
    check_cuda(cudaMalloc(&scratch_[k], want), "cudaMalloc of scratch");
    scratch_bytes_[k] = want;
  }
  return scratch_[k];
}

void* CudaContext::stage(Scratch kind, const void* host, size_t bytes) {
  void* d = scratch(kind, bytes);
  // Default: the engine stages tokens and targets in device memory already (a device-to-
  // device copy); tests and tools may still hand host arrays.
  check_cuda(cudaMemcpyAsync(d, host, bytes, cudaMemcpyDefault, stream()), "staging tokens or targets");
  return d;
}

void CudaContext::sync(const char* what) { check_cuda(cudaStreamSynchronize(stream()), what); }

void CudaContext::bind_thread() const {
  thread_local int bound = -1;
  if (bound == device_) return;
  check_cuda(cudaSetDevice(device_), "making the context's GPU this thread's");
  bound = device_;
}

void CudaContext::join() const {
  for (cudaEvent_t e : joins_) {
    check_cuda(cudaStreamWaitEvent(stream_, e, 0), "joining a host-to-device copy");
    check_cuda(cudaEventDestroy(e), "joining a host-to-device copy");
  }
  joins_.clear();
}

}  // namespace zt::cuda
