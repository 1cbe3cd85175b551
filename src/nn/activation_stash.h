// ActivationStash: where the saved inputs of checkpointed blocks go between a block's
// forward and its backward when they are not kept in the activation arena (DeepSpeed's
// activation_checkpointing.cpu_checkpointing; on a CPU machine the slower tier is the
// disk: parallel/offload/activation_swap.h; on a device, host memory:
// parallel/offload/activation_host_stash.h). With a stash, the outputs of blocks whose
// successor is checkpointed rotate between two live buffers, so the arena no longer
// holds one input per checkpointed block.
// Protocol, per pipeline slot: forward saves block l's input after using it; backward
// hints prefetch(l) ahead and load(l) copies the input back into a buffer of the model's.
// Device contract: `data` and `dst` are backend memory, crossed only by the backend's
// explicit copies (Backend::copy_to_host / copy_from_host), which are ordered with the
// backend's kernels: save's copy-out comes before any later kernel that overwrites data,
// and load's copy-in before any later kernel that reads dst. Host code never reads them.
// Thread-safety: the training thread only.
#pragma once

#include <cstddef>

#include "core/status.h"

namespace zt {

class ActivationStash {
 public:
  virtual ~ActivationStash() = default;
  // Keeps a copy of `bytes` at data as the input of `block` in `slot`.
  virtual Status save(int slot, int block, const void* data, size_t bytes) = 0;
  // Starts bringing back what save(slot, block) kept.
  virtual void prefetch(int slot, int block) = 0;
  // Copies the saved bytes, verified, to dst (as many bytes as save kept).
  virtual Status load(int slot, int block, void* dst) = 0;
  // Host memory the stash holds (buffers, or the entries themselves), and bytes on disk.
  virtual size_t buffer_bytes() const = 0;
  virtual size_t disk_bytes() const { return 0; }
};

}  // namespace zt
