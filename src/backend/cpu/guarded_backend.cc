// The guarded CPU backend (guarded_backend.h): a registry of PROT_NONE arenas, a counted
// unlock scope, and the CPU backend's tables with every entry wrapped in that scope.
#include "backend/cpu/guarded_backend.h"

#include "backend/table_wrap.h"
#include "core/check.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <string_view>

namespace zt {

namespace {

// Every live guarded region, and how many scopes hold them open.
class Guard {
 public:
  static Guard& get() {
    static Guard g;
    return g;
  }
  void add(void* p, size_t bytes) {
    std::lock_guard<std::mutex> l(mu_);
    regions_[p] = bytes;
    if (open_ == 0) mprotect(p, bytes, PROT_NONE);
  }
  void remove(void* p) {
    std::lock_guard<std::mutex> l(mu_);
    regions_.erase(p);
  }
  // True when [p, p + bytes) lies inside one live region.
  bool inside(const void* p, size_t bytes) {
    std::lock_guard<std::mutex> l(mu_);
    auto it = regions_.upper_bound(const_cast<void*>(p));
    if (it == regions_.begin()) return false;
    --it;
    const auto* b = static_cast<const unsigned char*>(it->first);
    const auto* q = static_cast<const unsigned char*>(p);
    return q >= b && q + bytes <= b + it->second;
  }
  void open() {
    std::lock_guard<std::mutex> l(mu_);
    if (open_++ == 0) protect(PROT_READ | PROT_WRITE);
  }
  void close() {
    std::lock_guard<std::mutex> l(mu_);
    if (--open_ == 0) protect(PROT_NONE);
  }

 private:
  void protect(int prot) {
    for (const auto& [p, bytes] : regions_) mprotect(p, bytes, prot);
  }
  std::mutex mu_;
  std::map<void*, size_t> regions_;
  int open_ = 0;
};

struct Unlocked {
  Unlocked() { Guard::get().open(); }
  ~Unlocked() { Guard::get().close(); }
  Unlocked(const Unlocked&) = delete;
  Unlocked& operator=(const Unlocked&) = delete;
};

size_t page_round(size_t bytes) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return (bytes + page - 1) / page * page;
}

// A copy's ends must be where the call says, as a device's copy engine needs: copy and
// zero inside arenas, copy_to_host from an arena to host memory, copy_from_host the
// other way. A host pointer handed to copy() would work on the CPU and fail on a GPU.
void expect_where(const char* call, const void* p, size_t bytes, bool arena) {
  if (bytes == 0) return;
  ZT_CHECK(Guard::get().inside(p, bytes) == arena, "guarded backend: %s got %s pointer %p (%zu bytes)", call,
           arena ? "a host-memory" : "an arena", p, bytes);
}

// Asynchronous crossings at the latest moment a device could make them, so that host
// code that does not wait for one sees the wrong bytes (to host: the copy happens at
// wait, reading the arena then), or stops here (from host: the copy happens at start,
// and wait checks that host code left the source alone meanwhile).
class LateToHost final : public PendingCopy {
 public:
  LateToHost(void* dst, const void* src, size_t bytes) : dst_(dst), src_(src), bytes_(bytes) {}
  ~LateToHost() override { wait(); }
  void wait() override;

 private:
  void* dst_;
  const void* src_;
  size_t bytes_;
};

class CheckedFromHost final : public PendingCopy {
 public:
  CheckedFromHost(const void* src, size_t bytes) : src_(src), bytes_(bytes), hash_(hash()) {}
  const void* source() const { return src_; }
  size_t bytes() const { return bytes_; }
  ~CheckedFromHost() override { wait(); }
  void wait() override {
    if (src_ == nullptr) return;
    ZT_CHECK(hash() == hash_, "guarded backend: the host source of an asynchronous copy (%p, %zu bytes) was written "
             "before wait_copy", src_, bytes_);
    src_ = nullptr;
  }

 private:
  size_t hash() const { return std::hash<std::string_view>{}({static_cast<const char*>(src_), bytes_}); }
  const void* src_;
  size_t bytes_;
  size_t hash_;
};

// A prefetch's destination holds neither its old nor its new bytes until the join: it is
// filled with NaNs (all bits set) at the start, so work queued before the join that reads
// dst computes NaNs, and the copy lands at the join, over whatever such work wrote; a
// missing join leaves the NaNs. The join checks that host code left the source alone.
class PrefetchFromHost final : public PendingCopy {
 public:
  PrefetchFromHost(void* dst, const void* src, size_t bytes) : dst_(dst), source_(src, bytes) { poison(); }
  ~PrefetchFromHost() override {}  // never joined: no work saw it (dst may be freed by now)
  void join() override {
    if (dst_ == nullptr) return;
    land();
    dst_ = nullptr;
    source_.wait();
  }
  void wait() override { join(); }

 private:
  void poison();
  void land();
  void* dst_;
  CheckedFromHost source_;
};

// The process groups' access: a communication thread moves arena data with them open.
class GuardDomain final : public MemoryDomain {
 public:
  void enter() override { Guard::get().open(); }
  void exit() override { Guard::get().close(); }
};

void LateToHost::wait() {
  if (dst_ == nullptr) return;
  Unlocked u;
  std::memmove(dst_, src_, bytes_);
  dst_ = nullptr;
}

void PrefetchFromHost::poison() {
  Unlocked u;
  std::memset(dst_, 0xff, source_.bytes());
}

void PrefetchFromHost::land() {
  Unlocked u;
  std::memmove(dst_, source_.source(), source_.bytes());
}

// The guarded backend's hook: every table call runs with the arenas open.
struct Opened {
  explicit Opened(int /*entry*/) {}
  Unlocked unlocked;
};

class GuardedBackend final : public Backend {
 public:
  explicit GuardedBackend(const Backend& cpu)
      : cpu_(cpu), ops_(wrap_kernel_ops<Opened>(cpu.ops())), moe_(wrap_moe_ops<Opened>(*cpu.moe_ops())) {
    if (cpu.half_ops() != nullptr) {
      half_ = cpu.compute_dtype() == DType::kBF16 ? wrap_half_ops<Opened, DType::kBF16>(*cpu.half_ops())
                                                   : wrap_half_ops<Opened, DType::kF16>(*cpu.half_ops());
    }
  }
  Device device() const override { return Device::kCpu; }
  DType compute_dtype() const override { return cpu_.compute_dtype(); }
  bool host() const override { return false; }
  const KernelOps& ops() const override { return ops_; }
  const ActivationOps<half_t>* half_ops() const override { return cpu_.half_ops() != nullptr ? &half_ : nullptr; }
  const MoeOps* moe_ops() const override { return &moe_; }
  std::string describe() const override { return "guarded " + cpu_.describe(); }

  StatusOr<Arena> allocate(size_t count, DType dtype, const char* what) const override {
    if (count == 0) return Arena(this, nullptr, 0, dtype);
    const size_t bytes = page_round(count * dtype_size(dtype));
    void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
      return Status::ResourceExhausted("guarded backend: cannot map " + std::to_string(bytes) + " bytes for " + what);
    }
    Guard::get().add(p, bytes);  // zero-filled by mmap
    return Arena(this, p, count, dtype);
  }
  void copy(void* dst, const void* src, size_t bytes) const override {
    expect_where("copy (destination)", dst, bytes, true);
    expect_where("copy (source)", src, bytes, true);
    move(dst, src, bytes);
  }
  void zero(void* dst, size_t bytes) const override {
    expect_where("zero", dst, bytes, true);
    Unlocked u;
    std::memset(dst, 0, bytes);
  }
  void copy_to_host(void* dst, const void* src, size_t bytes) const override {
    expect_where("copy_to_host (destination)", dst, bytes, false);
    expect_where("copy_to_host (source)", src, bytes, true);
    move(dst, src, bytes);
  }
  CopyHandle start_copy_to_host(void* dst, const void* src, size_t bytes) const override {
    expect_where("start_copy_to_host (destination)", dst, bytes, false);
    expect_where("start_copy_to_host (source)", src, bytes, true);
    return std::make_unique<LateToHost>(dst, src, bytes);
  }
  CopyHandle start_copy_from_host(void* dst, const void* src, size_t bytes) const override {
    copy_from_host(dst, src, bytes);
    return std::make_unique<CheckedFromHost>(src, bytes);
  }
  CopyHandle start_prefetch_from_host(void* dst, const void* src, size_t bytes) const override {
    expect_where("start_prefetch_from_host (destination)", dst, bytes, true);
    expect_where("start_prefetch_from_host (source)", src, bytes, false);
    return std::make_unique<PrefetchFromHost>(dst, src, bytes);
  }
  MemoryDomain* memory_domain() const override {
    static GuardDomain domain;
    return &domain;
  }
  bool in_backend_memory(const void* p) const override { return Guard::get().inside(p, 1); }
  void copy_from_host(void* dst, const void* src, size_t bytes) const override {
    expect_where("copy_from_host (destination)", dst, bytes, true);
    expect_where("copy_from_host (source)", src, bytes, false);
    move(dst, src, bytes);
  }

 protected:
  void release(void* data, size_t bytes) const override {
    Guard::get().remove(data);
    munmap(data, page_round(bytes));
  }

 private:
  static void move(void* dst, const void* src, size_t bytes) {
    Unlocked u;
    std::memmove(dst, src, bytes);
  }
  const Backend& cpu_;
  KernelOps ops_;
  MoeOps moe_;
  ActivationOps<half_t> half_{};
};

}  // namespace

bool guarded_backend_requested() {
  static const bool on = [] {
    const char* e = std::getenv("ZT_TEST_BACKEND");
    return e != nullptr && std::string(e) == "guarded";
  }();
  return on;
}

const Backend& guarded_cpu_backend(DType compute) {
  static const GuardedBackend f32(plain_cpu_backend(DType::kF32));
  static const GuardedBackend bf16(plain_cpu_backend(DType::kBF16));
  static const GuardedBackend f16(plain_cpu_backend(DType::kF16));
  return compute == DType::kF32 ? f32 : compute == DType::kBF16 ? bf16 : f16;
}

}  // namespace zt
