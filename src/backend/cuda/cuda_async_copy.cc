// Copy streams and events for the started crossings (cuda_async_copy.h).
#include "backend/cuda/cuda_async_copy.h"

#include <cuda_runtime_api.h>

#include "backend/cuda/cuda_context.h"

namespace zt::cuda {

namespace {

enum Direction { kToHost = 0, kFromHost = 1 };

cudaStream_t copy_stream(Direction d) {
  static cudaStream_t streams[2] = {};
  if (streams[d] == nullptr) check_cuda(cudaStreamCreateWithFlags(&streams[d], cudaStreamNonBlocking), "copy stream");
  return streams[d];
}

cudaEvent_t record(cudaStream_t s, const char* what) {
  cudaEvent_t e = nullptr;
  check_cuda(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), what);
  check_cuda(cudaEventRecord(e, s), what);
  return e;
}

// `then` waits for the work queued on `first` so far.
void order_after(cudaStream_t first, cudaStream_t then, const char* what) {
  cudaEvent_t e = record(first, what);
  check_cuda(cudaStreamWaitEvent(then, e, 0), what);
  check_cuda(cudaEventDestroy(e), what);  // released once it completes
}

class EventCopy final : public PendingCopy {
 public:
  explicit EventCopy(cudaEvent_t done) : done_(done) {}
  ~EventCopy() override { wait(); }
  void wait() override {
    if (done_ == nullptr) return;
    check_cuda(cudaEventSynchronize(done_), "waiting for an asynchronous copy");
    check_cuda(cudaEventDestroy(done_), "waiting for an asynchronous copy");
    done_ = nullptr;
  }
  void join() override {  // the compute stream waits for the copy; the event stays for wait()
    if (done_ != nullptr) check_cuda(cudaStreamWaitEvent(CudaContext::get().raw_stream(), done_, 0), "joining a prefetch");
  }

 private:
  cudaEvent_t done_;
};

// joined: later kernels see the bytes (a copy from host; a prefetch joins at join()).
CopyHandle start(Direction d, void* dst, const void* src, size_t bytes, bool joined) {
  const char* what = d == kToHost ? "asynchronous copy to host" : "asynchronous copy from host";
  CudaContext& c = CudaContext::get();
  cudaStream_t s = copy_stream(d);
  order_after(c.raw_stream(), s, what);  // the kernels so far, not the copies from host still to join
  check_cuda(cudaMemcpyAsync(dst, src, bytes, d == kToHost ? cudaMemcpyDeviceToHost : cudaMemcpyHostToDevice, s), what);
  if (joined) c.join_later(record(s, what));
  return std::make_unique<EventCopy>(record(s, what));
}

}  // namespace

CopyHandle start_copy_to_host(void* host_dst, const void* src, size_t bytes) {
  return start(kToHost, host_dst, src, bytes, false);
}

CopyHandle start_copy_from_host(void* dst, const void* host_src, size_t bytes) {
  return start(kFromHost, dst, host_src, bytes, true);
}

CopyHandle start_prefetch_from_host(void* dst, const void* host_src, size_t bytes) {
  return start(kFromHost, dst, host_src, bytes, false);
}

}  // namespace zt::cuda
