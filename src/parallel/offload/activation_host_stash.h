// ActivationHostStash: the host-memory ActivationStash (DeepSpeed's cpu_checkpointing on a
// GPU): for a backend whose memory is not the host's, the saved inputs of checkpointed
// blocks leave the device between a block's forward and its backward. One host entry per
// (pipeline slot, stashed block of this stage: stashed_blocks), max_bytes each. save starts the copy out and returns, so it runs
// beside the block's forward (the next save or finish_saves waits for it); prefetch starts
// the copy back of the next block's input into the model's other buffer, joined by its
// load, so it runs beside this block's recompute and backward; a load not prefetched starts
// its copy at once (kernels queued after it see the bytes; the host does not wait). The
// model's memory is crossed only by those copies (the stash contract of nn/activation_stash.h).
// Invariants: load(slot, block) follows save(slot, block) of the same micro-batch; the
// entry keeps the saved size; at most one save and one prefetch are in flight; an entry is
// not rewritten before its last load has read it.
// Thread-safety: the training thread only.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "backend/backend.h"
#include "nn/activation_stash.h"

namespace zt {

class ActivationHostStash final : public ActivationStash {
 public:
  // slots x blocks.size() entries of at most max_bytes each, for the (global) block numbers
  // in `blocks` (below n_layer), in host memory: the backend's staging_host() (page-locked on
  // a GPU) when pin, plain memory otherwise.
  static StatusOr<std::unique_ptr<ActivationHostStash>> create(const Backend& backend, int slots,
                                                               const std::vector<int>& blocks, int n_layer,
                                                               size_t max_bytes, bool pin);
  Status save(int slot, int block, const void* data, size_t bytes) override;
  void finish_saves() override { wait_copy(saving_); }
  void prefetch(int slot, int block, void* dst) override;
  Status load(int slot, int block, void* dst) override;
  bool fills_ahead() const override { return true; }
  size_t buffer_bytes() const override { return memory_.bytes(); }

  // The host bytes for that geometry (the memory estimate's figure).
  static size_t bytes_for(int slots, int blocks, size_t max_bytes);

 private:
  ActivationHostStash(const Backend& backend, Arena memory, std::vector<int> local, int blocks, size_t stride,
                      size_t entries)
      : backend_(backend),
        memory_(std::move(memory)),
        local_(std::move(local)),
        blocks_(blocks),
        stride_(stride),
        sizes_(entries, 0),
        loading_(entries) {}
  size_t index(int slot, int block) const;
  unsigned char* entry(int slot, int block) { return memory_.as<unsigned char>() + index(slot, block) * stride_; }
  void release_ahead();

  const Backend& backend_;
  Arena memory_;  // host memory, slots x blocks_ entries of stride_ bytes
  std::vector<int> local_;  // per global block, its entry within a slot (-1: not stashed here)
  int blocks_;
  size_t stride_;
  std::vector<size_t> sizes_;  // saved bytes per entry (0: nothing saved)
  std::vector<CopyHandle> loading_;  // per entry, its load in flight (after memory_: waited before it is freed)
  CopyHandle saving_;                // the last save's copy out, until it has read the input
  struct Ahead {
    size_t entry;
    void* dst;
  };
  std::optional<Ahead> ahead_;  // the prefetch not yet joined by its load
};

}  // namespace zt
