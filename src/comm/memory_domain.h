// MemoryDomain: where the buffers of a process group's operations live, and how the
// group's communication thread gets at them. Host memory needs nothing (no domain). A
// backend whose memory host code may not touch (a device; the guarded CPU test backend)
// gives each group it uses its domain (ProcessGroup::set_memory_domain): the group then
// moves data only inside the domain's access, the way a device collective runs as work
// of the device rather than as host code reading its memory.
// Invariant: enter()/exit() pair up and nest; any thread may hold an access.
#pragma once

namespace zt {

class MemoryDomain {
 public:
  virtual ~MemoryDomain() = default;
  virtual void enter() = 0;  // the domain's memory may be read and written until exit()
  virtual void exit() = 0;
};

// enter() for a scope; a null domain (host memory) does nothing.
class DomainAccess {
 public:
  explicit DomainAccess(MemoryDomain* d) : d_(d) {
    if (d_ != nullptr) d_->enter();
  }
  ~DomainAccess() {
    if (d_ != nullptr) d_->exit();
  }
  DomainAccess(const DomainAccess&) = delete;
  DomainAccess& operator=(const DomainAccess&) = delete;

 private:
  MemoryDomain* d_;
};

}  // namespace zt
