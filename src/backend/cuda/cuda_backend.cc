// The CUDA Backend (cuda_backend.h).
#include "backend/cuda/cuda_backend.h"

#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "backend/cuda/attention_env.h"
#include "backend/cuda/cuda_async_copy.h"
#include "backend/cuda/cuda_context.h"
#include "backend/cuda/cuda_device.h"
#include "backend/cuda/cuda_pinned_host.h"
#include "backend/cuda/cuda_profile.h"
#include "backend/cuda/nccl_process_group.h"
#include "backend/cuda/cuda_tables.h"
#include "backend/table_wrap.h"
#include "comm/gather_bytes.h"
#include "core/host_name.h"
#include "core/launcher_env.h"

namespace zt {

namespace {

using cuda::check_cuda;
using cuda::CudaContext;

// This rank's GPU: its host and UUID ("host/uuid hex").
std::string gpu_key() {
  int device = 0;
  cudaDeviceProp p{};
  check_cuda(cudaGetDevice(&device), "the current GPU");
  check_cuda(cudaGetDeviceProperties(&p, device), "the current GPU's properties");
  std::string key = host_name() + "/";
  char hex[3];
  for (unsigned char b : p.uuid.bytes) {
    std::snprintf(hex, sizeof(hex), "%02x", b);
    key += hex;
  }
  return key;
}

// "" when no two ranks' keys are equal, else which ranks share which GPU (on rank 0, who
// gathered them).
std::string shared_gpus(const std::vector<std::string>& keys) {
  std::map<std::string, int> first;
  for (size_t r = 0; r < keys.size(); ++r) {
    const auto [it, fresh] = first.emplace(keys[r], static_cast<int>(r));
    if (!fresh) return "ranks " + std::to_string(it->second) + " and " + std::to_string(r) + " share GPU " + keys[r];
  }
  return "";
}

// NCCL for every rank (collective over world): loadable here, and each rank on a GPU of its
// own, compared by host and UUID (not by launcher counts: ranks may see one GPU each), unless
// NCCL is 2.30 or later with NCCL_MULTI_RANK_GPU_ENABLE=1 (earlier ones refuse two ranks on
// one GPU: "Duplicate GPU"). Every rank takes part in the comparison before answering.
Status nccl_usable(ProcessGroup& world) {
  const int version = cuda::loaded_nccl_version();
  ZT_ASSIGN_OR_RETURN(const std::vector<std::string> keys, gather_bytes(&world, gpu_key(), 0));
  ZT_ASSIGN_OR_RETURN(const std::string shared, broadcast_bytes(&world, world.rank() == 0 ? shared_gpus(keys) : "", 0));
  if (version == 0) return Status::FailedPrecondition("NCCL (libnccl.so.2) is not loadable here");
  const char* multi = std::getenv("NCCL_MULTI_RANK_GPU_ENABLE");
  if (!shared.empty() && !(version >= 23000 && multi != nullptr && std::string(multi) == "1")) {
    return Status::FailedPrecondition(shared + ", and NCCL " + nccl_version_string(version) +
                                      " refuses two ranks on one GPU (2.30 allows it with NCCL_MULTI_RANK_GPU_ENABLE=1)");
  }
  return Status::OK();
}

class CudaBackend final : public Backend {
 public:
  CudaBackend(DType compute, const CudaDeviceInfo& info)
      : compute_(compute), info_(info), base_ops_(cuda::make_cuda_f32_ops()), ops_(base_ops_) {
    if (compute != DType::kF32) base_half_ = half_ = cuda::make_cuda_half_ops(compute);
    if (cuda::profiling_requested()) {  // every entry timed (cuda_profile.h)
      ops_ = wrap_kernel_ops<cuda::ProfileScope>(base_ops_);
      if (compute == DType::kBF16) half_ = wrap_half_ops<cuda::ProfileScope, DType::kBF16>(base_half_);
      if (compute == DType::kF16) half_ = wrap_half_ops<cuda::ProfileScope, DType::kF16>(base_half_);
    }
  }
  Device device() const override { return Device::kCuda; }
  DType compute_dtype() const override { return compute_; }
  bool host() const override { return false; }
  const KernelOps& ops() const override { return ops_; }
  const ActivationOps<half_t>* half_ops() const override { return compute_ == DType::kF32 ? nullptr : &half_; }
  std::string describe() const override {
    const cuda::CpuOrder o = CudaContext::get().order();
    return std::string("cuda ") + dtype_name(compute_) + (compute_ == DType::kF32 ? "" : " (fp32 master weights)") +
           " on " + info_.describe() + "; gemm: " + CudaContext::get().lt().describe() +
           "; elementwise kernels in the CPU's " + std::to_string(o.width) + "-lane " + (o.fused ? "fused" : "unfused") +
           " order; attention " + (compute_ == DType::kF32 ? "materialized (T x T)" : cuda::attention_path_name());
  }

  double peak_flops() const override { return info_.dense_bf16_peak_tflops * 1e12; }

  StatusOr<Arena> allocate(size_t count, DType dtype, const char* what) const override {
    if (count == 0) return Arena(this, nullptr, 0, dtype);
    const size_t bytes = (count * dtype_size(dtype) + 255) / 256 * 256;
    void* p = nullptr;
    const cudaError_t e = cudaMalloc(&p, bytes);
    if (e != cudaSuccess) {
      if (e != cudaErrorMemoryAllocation) check_cuda(e, "allocating device memory");  // e.g. an earlier fault
      cudaGetLastError();  // clear it: an allocation failure is reported, not sticky
      size_t free_bytes = 0, total = 0;
      cudaMemGetInfo(&free_bytes, &total);
      return Status::ResourceExhausted("out of GPU memory: cannot allocate " + std::to_string(bytes) + " bytes for " +
                                       what + " (" + std::to_string(free_bytes >> 20) + " MiB free of " +
                                       std::to_string(total >> 20) + "); use a higher ZeRO stage, activation "
                                       "checkpointing or a smaller micro-batch");
    }
    zero(p, bytes);
    return Arena(this, p, count, dtype);
  }
  void copy(void* dst, const void* src, size_t bytes) const override {
    check_cuda(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, stream()), "copy");
  }
  void zero(void* dst, size_t bytes) const override {
    check_cuda(cudaMemsetAsync(dst, 0, bytes, stream()), "zero");
  }
  void copy_to_host(void* host_dst, const void* src, size_t bytes) const override {
    check_cuda(cudaMemcpyAsync(host_dst, src, bytes, cudaMemcpyDeviceToHost, stream()), "copy to host");
    CudaContext::get().sync("copy to host");
  }
  void copy_from_host(void* dst, const void* host_src, size_t bytes) const override {
    check_cuda(cudaMemcpyAsync(dst, host_src, bytes, cudaMemcpyHostToDevice, stream()), "copy from host");
    CudaContext::get().sync("copy from host");
  }
  CopyHandle start_copy_to_host(void* host_dst, const void* src, size_t bytes) const override {
    return cuda::start_copy_to_host(host_dst, src, bytes);
  }
  CopyHandle start_copy_from_host(void* dst, const void* host_src, size_t bytes) const override {
    return cuda::start_copy_from_host(dst, host_src, bytes);
  }
  CopyHandle start_prefetch_from_host(void* dst, const void* host_src, size_t bytes) const override {
    return cuda::start_prefetch_from_host(dst, host_src, bytes);
  }
  void synchronize() const override { CudaContext::get().sync("synchronize"); }
  const Backend& staging_host() const override { return cuda_pinned_host(compute_); }
  // Device memory (cudaMalloc'd); pinned and plain host memory are not.
  bool in_backend_memory(const void* p) const override { return cuda::is_device_memory(p); }
  Status native_groups_usable(ProcessGroup& world) const override { return nccl_usable(world); }
  StatusOr<std::unique_ptr<ProcessGroup>> native_group(ProcessGroup& host, const CommOptions& options) const override {
    return cuda::make_nccl_process_group(host, options);
  }

 protected:
  void release(void* data, size_t) const override { cudaFree(data); }

 private:
  static cudaStream_t stream() { return CudaContext::get().stream(); }
  DType compute_;
  CudaDeviceInfo info_;
  KernelOps base_ops_, ops_;  // ops_: base_ops_, or base_ops_ timed entry by entry
  ActivationOps<half_t> base_half_{}, half_{};
};

}  // namespace

int cuda_local_device(int device_count) { return launcher_local_place().rank % device_count; }

StatusOr<const Backend*> cuda_backend(DType compute) {
  static CudaBackend* made[3] = {};  // never freed: arenas may be released during exit
  CudaBackend*& b = made[static_cast<int>(compute)];
  if (b != nullptr) return b;
  ZT_RETURN_IF_ERROR(cuda::check_attention_env());
  ZT_ASSIGN_OR_RETURN(const int n, cuda_device_count());
  const int device = cuda_local_device(n);
  ZT_ASSIGN_OR_RETURN(const CudaDeviceInfo info, cuda_device_info(device));
  ZT_RETURN_IF_ERROR(CudaContext::create(device).status());
  b = new CudaBackend(compute, info);
  return b;
}

}  // namespace zt
