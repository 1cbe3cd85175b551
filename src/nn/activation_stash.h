// ActivationStash: where the saved inputs of checkpointed blocks go between a block's
// forward and its backward when they are not kept in the activation arena (DeepSpeed's
// activation_checkpointing.cpu_checkpointing; on a CPU machine the slower tier is the
// disk: parallel/offload/activation_swap.h; on a device, host memory:
// parallel/offload/activation_host_stash.h). With a stash, the outputs of blocks whose
// successor is checkpointed rotate between two live buffers, so the arena no longer
// holds one input per checkpointed block.
// Protocol, per pipeline slot: forward saves block l's input before queuing the block's
// work, and calls finish_saves() instead before a block whose input is not stashed; a
// saved input may be read by a copy still in flight until the next of those calls, so work
// queued before it must not overwrite that input (a block does not write its own input).
// Backward loads block l's input into a buffer of the model's, then hints prefetch for the
// next block to come back, with another buffer: a stash that fills_ahead() starts copying
// into that buffer at once, so the model leaves it alone until the matching load.
// Device contract: `data` and `dst` are backend memory, crossed only by the backend's
// explicit copies (Backend::copy_to_host / copy_from_host and their started forms), which
// are ordered with the backend's kernels as above. Host code never reads them.
// Thread-safety: the training thread only.
#pragma once

#include <cstddef>

#include "core/status.h"

namespace zt {

class ActivationStash {
 public:
  virtual ~ActivationStash() = default;
  // Keeps a copy of `bytes` at data as the input of `block` in `slot`; the previous save's
  // copy has read its input when this returns.
  virtual Status save(int slot, int block, const void* data, size_t bytes) = 0;
  // Returns when every save's copy has read its input.
  virtual void finish_saves() {}
  // Starts bringing back what save(slot, block) kept; with fills_ahead(), into dst.
  virtual void prefetch(int slot, int block, void* dst) = 0;
  // Copies the saved bytes, verified, to dst (as many bytes as save kept): work queued
  // after it sees them.
  virtual Status load(int slot, int block, void* dst) = 0;
  // True when prefetch writes into its dst (the model then brings inputs back into two
  // alternating buffers); false when the stash reads ahead into buffers of its own.
  virtual bool fills_ahead() const { return false; }
  // Host memory the stash holds (buffers, or the entries themselves), and bytes on disk.
  virtual size_t buffer_bytes() const = 0;
  virtual size_t disk_bytes() const { return 0; }
};

}  // namespace zt
