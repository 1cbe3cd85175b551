// Backend: one device and compute dtype. It owns the kernel-ops table the model and
// optimizer call, and the allocation, copy and zero of every arena (so OpenMP, memcpy
// and a device's memory and streams stay behind this seam). zerotrain has one backend
// today, the CPU in f32 (cpu_backend()); backend_for() refuses what is not built, with
// the reason. A device backend would add its own streams behind the same calls:
// copy/zero are ordered with the table's kernels on the backend's stream and
// synchronize() waits for them.
// Thread-safety: backends are immutable after construction; calls are thread-safe
// except that one arena is not written by two threads at once.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "backend/arena.h"
#include "tensor/dtype.h"
#include "kernels/kernel_ops.h"
#include "kernels/moe_ops.h"
#include "comm/memory_domain.h"
#include "comm/process_group.h"
#include "core/status.h"

namespace zt {

enum class Device { kCpu, kCuda };

inline const char* device_name(Device d) { return d == Device::kCpu ? "cpu" : "cuda"; }

class Backend;
const Backend& plain_cpu_backend(DType compute);

// A crossing started by Backend::start_copy_to_host / start_copy_from_host. wait() returns
// when its bytes have arrived and the host buffer may be read (to host) or reused (from
// host); the destructor waits too. Null where the copy was done at the start.
class PendingCopy {
 public:
  virtual ~PendingCopy() = default;
  virtual void wait() = 0;
  // For a copy started by start_prefetch_from_host: every kernel queued after this sees
  // its bytes, and the host does not wait. Other copies are visible already.
  virtual void join() {}
};
using CopyHandle = std::unique_ptr<PendingCopy>;
inline void wait_copy(CopyHandle& h) {
  if (h) h->wait();
  h.reset();
}
inline void join_copy(const CopyHandle& h) {
  if (h) h->join();
}

class Backend {
 public:
  virtual ~Backend() = default;
  virtual Device device() const = 0;
  virtual DType compute_dtype() const = 0;
  // True when arenas live in host memory the caller may read and write directly.
  virtual bool host() const = 0;
  // The f32 table: the optimizer, norms and casts of every backend, and the model's
  // kernels when compute_dtype() is f32.
  virtual const KernelOps& ops() const = 0;
  // The model's kernels when compute_dtype() is bf16 or f16 (16-bit activations); null for f32.
  virtual const ActivationOps<half_t>* half_ops() const { return nullptr; }
  // The MoE layer's data movement and expert MLPs (fp32); null where this backend has
  // none, and the model then refuses MoE blocks by the backend's name.
  virtual const MoeOps* moe_ops() const { return nullptr; }
  // "cpu f32: avx512 kernels, gemm <GemmPath::describe()>", for banners and reports.
  virtual std::string describe() const = 0;
  // The device's dense peak in FLOP/s for MFU (a GPU's datasheet bf16 rate, as llm.c
  // counts), or 0 where the caller measures it (the CPU's FMA peak).
  virtual double peak_flops() const { return 0.0; }

  // count zero-initialised elements of dtype, 64-byte aligned. Failure is a
  // ResourceExhausted naming `what` and the bytes.
  virtual StatusOr<Arena> allocate(size_t count, DType dtype, const char* what) const = 0;
  // Within backend memory (arena to arena), ordered with the kernels.
  virtual void copy(void* dst, const void* src, size_t bytes) const = 0;
  virtual void zero(void* dst, size_t bytes) const = 0;
  // The explicit crossings between host memory and backend memory: the only way host code
  // reads or writes an arena. They return when the bytes have arrived (after the kernels
  // queued before them, on a device). The CPU backend's are plain copies.
  virtual void copy_to_host(void* host_dst, const void* src, size_t bytes) const { copy(host_dst, src, bytes); }
  virtual void copy_from_host(void* dst, const void* host_src, size_t bytes) const { copy(dst, host_src, bytes); }
  // The same crossings, started and not awaited, so that host work and the other direction
  // overlap them (offload's pipeline). To host: ordered after the kernels queued so far.
  // From host: every kernel queued after it sees the bytes. Until wait_copy, host code
  // neither reads the destination (to host) nor writes the source (from host); the
  // device end is not written by host-queued work in between. A copy to host is not
  // ordered after copies from host still in flight (only after kernels): it must not read
  // device memory that one of those writes. The default copies at once.
  virtual CopyHandle start_copy_to_host(void* host_dst, const void* src, size_t bytes) const {
    copy_to_host(host_dst, src, bytes);
    return nullptr;
  }
  virtual CopyHandle start_copy_from_host(void* dst, const void* host_src, size_t bytes) const {
    copy_from_host(dst, host_src, bytes);
    return nullptr;
  }
  // A copy from host ahead of need (a prefetch): ordered after the kernels queued so far,
  // and seen by kernels only from join_copy on, so that it lands while the kernels queued
  // in between run. Until the join, that work neither reads nor writes dst; until
  // wait_copy, host code does not write the source. The default copies at once.
  virtual CopyHandle start_prefetch_from_host(void* dst, const void* host_src, size_t bytes) const {
    copy_from_host(dst, host_src, bytes);
    return nullptr;
  }
  virtual void synchronize() const {}
  // Where host memory that this backend's copies cross most often lives (offload's
  // staging pieces, a host parameter shard, stashed activations): a host backend (host()
  // true, the CPU's kernels) whose arenas are page-locked on a device, so that copies to
  // and from them run at the bus's speed. The plain CPU backend where nothing is gained.
  // Its allocation failure names the bytes, what they were for and the way out.
  virtual const Backend& staging_host() const { return plain_cpu_backend(compute_dtype()); }
  // The domain of this backend's arenas for the process groups that move them
  // (comm/memory_domain.h; ProcessGroup::set_memory_domain); null: host memory.
  virtual MemoryDomain* memory_domain() const { return nullptr; }
  // True when p points into this backend's memory where host code may not read it (a
  // device's; a guarded arena): what a host-staged process group copies across.
  virtual bool in_backend_memory(const void* p) const {
    (void)p;
    return false;
  }
  // Process groups of this backend's own that move its memory (NCCL on CUDA): whether this
  // rank can use them (OK), or why not (none here; the library missing; ranks sharing a
  // device where the library refuses that). Collective over `world` (every rank calls it:
  // the devices of all ranks are compared). Without them groups stage through host memory.
  virtual Status native_groups_usable(ProcessGroup& world) const {
    (void)world;
    return Status::Unimplemented("this backend has none");
  }
  // One over `host`'s ranks (collective over `host`). REQUIRES: native_groups_usable() on every rank.
  virtual StatusOr<std::unique_ptr<ProcessGroup>> native_group(ProcessGroup& host, const CommOptions& options) const {
    (void)host;
    (void)options;
    return Status::Unimplemented("this backend has no process groups of its own");
  }

 protected:
  friend class Arena;
  virtual void release(void* data, size_t bytes) const = 0;
};

// The CPU f32 backend: ISA-dispatched kernels (active_isa()) and the GEMM path of
// gemm_path(). REQUIRES: check_backend_environment() is OK (binaries check it at start).
// Under ZT_TEST_BACKEND=guarded it and backend_for(kCpu, ...) are the guarded backends
// (backend/cpu/guarded_backend.h); plain_cpu_backend is always the plain one.
const Backend& cpu_backend();
const Backend& plain_cpu_backend(DType compute);

// `b`, or cpu_backend() when b is null (the default of every options struct's backend).
inline const Backend& backend_or_cpu(const Backend* b) { return b != nullptr ? *b : cpu_backend(); }

// The backend for (device, compute dtype), or why not: Unimplemented for a build without
// CUDA, FailedPrecondition for a machine without a usable GPU (the reason named).
StatusOr<const Backend*> backend_for(Device device, DType compute);

// Start-up check of the environment the backend reads: ZT_ISA and ZT_GEMM. An invalid
// value is an InvalidArgument naming the variable and its allowed values.
Status check_backend_environment();
// The same for a binary's main(): prints the error to stderr and returns false, so the
// binary exits with status 2 before any work.
bool backend_environment_ok();

}  // namespace zt
