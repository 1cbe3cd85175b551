// The pinned host backend (cuda_pinned_host.h): the plain CPU backend's kernels and
// copies over cudaHostAlloc'd arenas.
#include "backend/cuda/cuda_pinned_host.h"

#include <cuda_runtime_api.h>

#include <cstring>
#include <string>

#include "backend/cuda/cuda_context.h"

namespace zt {

namespace {

class PinnedHost final : public Backend {
 public:
  explicit PinnedHost(const Backend& cpu) : cpu_(cpu) {}
  Device device() const override { return Device::kCpu; }
  DType compute_dtype() const override { return cpu_.compute_dtype(); }
  bool host() const override { return true; }
  const KernelOps& ops() const override { return cpu_.ops(); }
  const ActivationOps<half_t>* half_ops() const override { return cpu_.half_ops(); }
  const MoeOps* moe_ops() const override { return cpu_.moe_ops(); }
  std::string describe() const override { return "pinned host memory, " + cpu_.describe(); }

  StatusOr<Arena> allocate(size_t count, DType dtype, const char* what) const override {
    if (count == 0) return Arena(this, nullptr, 0, dtype);
    const size_t bytes = (count * dtype_size(dtype) + 63) / 64 * 64;
    void* p = nullptr;
    // Portable: pinned for every CUDA context, whichever thread (and current device) asks.
    const cudaError_t e = cudaHostAlloc(&p, bytes, cudaHostAllocPortable);
    if (e != cudaSuccess) {
      // Only a refusal for want of memory is the caller's to handle; anything else (a sticky
      // error of an earlier kernel) aborts with CUDA's own words, not as a pinning failure.
      if (e != cudaErrorMemoryAllocation) cuda::check_cuda(e, "pinning host memory");
      cudaGetLastError();  // reported, not sticky
      return Status::ResourceExhausted("cannot pin " + std::to_string(bytes) + " bytes of host memory for " + what +
                                       " (" + cudaGetErrorString(e) + "); free host memory, or, for offload's staging, set "
                                       "zero_optimization.offload_optimizer.pin_memory false (its copies then run from "
                                       "pageable memory; collectives staged through host memory always pin theirs)");
    }
    std::memset(p, 0, bytes);
    return Arena(this, p, count, dtype);
  }
  void copy(void* dst, const void* src, size_t bytes) const override { std::memmove(dst, src, bytes); }
  void zero(void* dst, size_t bytes) const override { std::memset(dst, 0, bytes); }

 protected:
  void release(void* data, size_t) const override { cudaFreeHost(data); }

 private:
  const Backend& cpu_;
};

}  // namespace

const Backend& cuda_pinned_host(DType compute) {
  static PinnedHost* made[3] = {};  // never freed: arenas may be released during exit
  PinnedHost*& b = made[static_cast<int>(compute)];
  if (b == nullptr) b = new PinnedHost(plain_cpu_backend(compute));
  return *b;
}

}  // namespace zt
