// ActivationHostStash: the host-memory ActivationStash (DeepSpeed's cpu_checkpointing on a
// GPU): for a backend whose memory is not the host's, the saved inputs of checkpointed
// blocks leave the device between a block's forward and its backward. One host entry per
// (pipeline slot, block), max_bytes each; save copies the input out with the backend's
// copy, load starts the copy back (kernels queued after it see the bytes; the host does
// not wait) and the entry's next save waits for it. The model's memory is crossed only
// by those copies (the stash contract of nn/activation_stash.h).
// Invariants: load(slot, block) follows save(slot, block) of the same micro-batch; the
// entry keeps the saved size.
// Thread-safety: the training thread only.
#pragma once

#include <memory>
#include <vector>

#include "backend/backend.h"
#include "nn/activation_stash.h"

namespace zt {

class ActivationHostStash final : public ActivationStash {
 public:
  // slots x blocks entries of at most max_bytes each, in host memory: the backend's
  // staging_host() (page-locked on a GPU) when pin, plain memory otherwise.
  static StatusOr<std::unique_ptr<ActivationHostStash>> create(const Backend& backend, int slots, int blocks,
                                                               size_t max_bytes, bool pin);
  Status save(int slot, int block, const void* data, size_t bytes) override;
  void prefetch(int, int) override {}  // the copy back is one host-to-device copy at load
  Status load(int slot, int block, void* dst) override;
  size_t buffer_bytes() const override { return memory_.bytes(); }

  // The host bytes for that geometry (the memory estimate's figure).
  static size_t bytes_for(int slots, int blocks, size_t max_bytes);

 private:
  ActivationHostStash(const Backend& backend, Arena memory, int blocks, size_t stride, size_t entries)
      : backend_(backend),
        memory_(std::move(memory)),
        blocks_(blocks),
        stride_(stride),
        sizes_(entries, 0),
        loading_(entries) {}
  unsigned char* entry(int slot, int block) {
    return memory_.as<unsigned char>() + static_cast<size_t>(slot * blocks_ + block) * stride_;
  }

  const Backend& backend_;
  Arena memory_;  // plain host memory (plain_cpu_backend), slots x blocks entries of stride_ bytes
  int blocks_;
  size_t stride_;
  std::vector<size_t> sizes_;  // saved bytes per entry (0: nothing saved)
  std::vector<CopyHandle> loading_;  // per entry, its load in flight (after memory_: waited before it is freed)
};

}  // namespace zt
