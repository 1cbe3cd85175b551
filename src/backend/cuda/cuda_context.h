// The per-process state behind zerotrain's CUDA backend: the device, one compute stream
// that every kernel, copy and cuBLASLt product of the backend is queued on (so they run
// in the order the engine issues them and the host never waits except at an explicit
// crossing), the cuBLASLt handle with its cached algorithms, the CPU order the
// lane-order kernels reproduce (the host's active ISA), and growable device scratch
// (kernel workspaces, staged tokens and targets).
// Errors: a failure inside a kernel-table call (a cuBLASLt refusal, a bad launch, an
// asynchronous fault seen at the next synchronisation) aborts naming the call and CUDA's
// message: the table's calls return nothing, and a half-done step cannot continue.
// Thread-safety: one training thread per process drives the device.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <memory>
#include <vector>

#include "core/status.h"
#include "kernels/cuda/cpu_order.h"
#include "kernels/cuda/gemm_lt.h"

namespace zt::cuda {

enum class Scratch { kWorkspace, kTokens, kTargets, kBuckets, kReduce, kWide, kCount };

class CudaContext {
 public:
  // Creates the context on `device` once per process (later calls return it; a second
  // device is refused).
  static StatusOr<CudaContext*> create(int device);
  static CudaContext& get();  // REQUIRES: create() succeeded

  int device() const { return device_; }
  // The compute stream, made first to wait for every host-to-device copy started since the
  // last call (join_later), so each kernel queued on it sees those bytes.
  cudaStream_t stream() const {
    bind_thread();
    if (!joins_.empty()) join();
    return stream_;
  }
  // The compute stream without that join: what the copy streams order themselves after
  // (the kernels queued so far, not the copies still to be joined).
  cudaStream_t raw_stream() const {
    bind_thread();
    return stream_;
  }
  // Makes this context's device the calling thread's (CUDA's current device is per thread:
  // an OpenMP worker that copies, as the parameter initialisation's do, starts on device 0,
  // where it would make a context of its own and use a stream of another device).
  void bind_thread() const;
  // The compute stream waits for `done` (recorded on a copy stream) before its next work;
  // takes the event.
  void join_later(cudaEvent_t done) { joins_.push_back(done); }
  LtGemm& lt() { return *lt_; }
  CpuOrder order() const { return order_; }
  // At least `bytes` of device scratch of that kind, valid until the next request of the
  // same kind with more bytes (requests are stream-ordered, so reuse is safe).
  void* scratch(Scratch kind, size_t bytes);
  // Copies host memory into that scratch (stream-ordered) and returns the device copy.
  void* stage(Scratch kind, const void* host, size_t bytes);
  // Waits for the stream; aborts naming `what` if any queued work failed.
  void sync(const char* what);

 private:
  CudaContext() = default;
  int device_ = 0;
  void join() const;
  cudaStream_t stream_ = nullptr;
  mutable std::vector<cudaEvent_t> joins_;  // host-to-device copies the compute stream has yet to wait for
  std::unique_ptr<LtGemm> lt_;
  CpuOrder order_;
  void* scratch_[static_cast<int>(Scratch::kCount)] = {};
  size_t scratch_bytes_[static_cast<int>(Scratch::kCount)] = {};
};

// Aborts naming `what` when s is not OK (inside kernel-table calls).
void check_ok(const Status& s, const char* what);
// Aborts naming `what` when e is not cudaSuccess.
void check_cuda(cudaError_t e, const char* what);
// Whether the GPU can address p as its own: device or managed memory (true), or host
// memory, pinned or not (false). Any CUDA error other than "not a CUDA pointer" aborts
// with its name: a sticky error from an earlier kernel must not pass for host memory.
bool is_device_memory(const void* p);

}  // namespace zt::cuda
