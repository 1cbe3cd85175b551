// DelegatingBackend: a test backend that is another backend in every call, except the
// host memory of its staging_host(), which a test chooses (a failing allocator, to show
// that a failed pinned allocation stops the run with its reason). It counts the bytes
// that cross between host and backend memory (crossed()), for traffic estimates; with
// hide_memory_domain() its groups must stage through host memory. The staging hosts a test
// chooses: UnpinnableHost (every allocation fails) and CountingHost (counts live bytes).
// Thread-safety: as the backend it wraps.
#pragma once

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <cstdint>
#include <string>

#include "backend/backend.h"

namespace zt::testing {

// What the test hosts below share: host memory with the CPU backend's kernels and copies.
class TestHost : public Backend {
 public:
  explicit TestHost(const Backend& cpu) : cpu_(cpu) {}
  Device device() const override { return Device::kCpu; }
  DType compute_dtype() const override { return cpu_.compute_dtype(); }
  bool host() const override { return true; }
  const KernelOps& ops() const override { return cpu_.ops(); }
  void copy(void* dst, const void* src, size_t bytes) const override { cpu_.copy(dst, src, bytes); }
  void zero(void* dst, size_t bytes) const override { cpu_.zero(dst, bytes); }

 protected:
  const Backend& cpu_;
};

// A host backend whose every allocation fails as pinned memory does when the host is out
// of page-locked memory.
class UnpinnableHost final : public TestHost {
 public:
  using TestHost::TestHost;
  std::string describe() const override { return "unpinnable host memory"; }
  StatusOr<Arena> allocate(size_t count, DType dtype, const char* what) const override {
    if (count == 0) return Arena(this, nullptr, 0, dtype);
    return Status::ResourceExhausted("cannot pin " + std::to_string(count * dtype_size(dtype)) +
                                     " bytes of host memory for " + what + " (test)");
  }

 protected:
  void release(void*, size_t) const override {}
};

// A host backend that is the plain CPU's and counts the bytes of its live arenas (what a
// device's page-locked staging host would hold).
class CountingHost final : public TestHost {
 public:
  using TestHost::TestHost;
  std::string describe() const override { return "counted host memory"; }
  StatusOr<Arena> allocate(size_t count, DType dtype, const char* what) const override {
    if (count == 0) return Arena(this, nullptr, 0, dtype);
    const size_t bytes = (count * dtype_size(dtype) + 63) / 64 * 64;
    void* p = std::aligned_alloc(64, bytes);
    if (p == nullptr) return Status::ResourceExhausted(std::string("counted host memory for ") + what);
    std::memset(p, 0, bytes);
    live_ += count * dtype_size(dtype);
    return Arena(this, p, count, dtype);
  }
  uint64_t live() const { return live_; }

 protected:
  void release(void* data, size_t bytes) const override {
    live_ -= bytes;
    std::free(data);
  }

 private:
  mutable std::atomic<uint64_t> live_{0};
};

class DelegatingBackend final : public Backend {
 public:
  DelegatingBackend(const Backend& inner, const Backend& staging) : inner_(inner), staging_(staging) {}
  Device device() const override { return inner_.device(); }
  DType compute_dtype() const override { return inner_.compute_dtype(); }
  bool host() const override { return inner_.host(); }
  const KernelOps& ops() const override { return inner_.ops(); }
  const ActivationOps<half_t>* half_ops() const override { return inner_.half_ops(); }
  const MoeOps* moe_ops() const override { return inner_.moe_ops(); }
  std::string describe() const override { return inner_.describe(); }
  double peak_flops() const override { return inner_.peak_flops(); }
  StatusOr<Arena> allocate(size_t count, DType dtype, const char* what) const override {
    return inner_.allocate(count, dtype, what);  // the inner backend's arenas, released by it
  }
  void copy(void* dst, const void* src, size_t bytes) const override { inner_.copy(dst, src, bytes); }
  void zero(void* dst, size_t bytes) const override { inner_.zero(dst, bytes); }
  void copy_to_host(void* dst, const void* src, size_t bytes) const override {
    crossed_ += bytes;
    inner_.copy_to_host(dst, src, bytes);
  }
  void copy_from_host(void* dst, const void* src, size_t bytes) const override {
    crossed_ += bytes;
    inner_.copy_from_host(dst, src, bytes);
  }
  CopyHandle start_copy_to_host(void* dst, const void* src, size_t bytes) const override {
    crossed_ += bytes;
    return inner_.start_copy_to_host(dst, src, bytes);
  }
  CopyHandle start_copy_from_host(void* dst, const void* src, size_t bytes) const override {
    crossed_ += bytes;
    return inner_.start_copy_from_host(dst, src, bytes);
  }
  CopyHandle start_prefetch_from_host(void* dst, const void* src, size_t bytes) const override {
    crossed_ += bytes;
    return inner_.start_prefetch_from_host(dst, src, bytes);
  }
  uint64_t crossed() const { return crossed_; }
  void synchronize() const override { inner_.synchronize(); }
  MemoryDomain* memory_domain() const override { return hide_domain_ ? nullptr : inner_.memory_domain(); }
  bool in_backend_memory(const void* p) const override { return inner_.in_backend_memory(p); }
  // Without its domain the backend's memory is out of every process group's reach, as a
  // GPU's is: groups then stage through host memory (backend/staged_process_group.h).
  void hide_memory_domain() { hide_domain_ = true; }
  const Backend& staging_host() const override { return staging_; }

 protected:
  void release(void*, size_t) const override {}  // never an owner

 private:
  const Backend& inner_;
  const Backend& staging_;
  mutable std::atomic<uint64_t> crossed_{0};
  bool hide_domain_ = false;
};

}  // namespace zt::testing
