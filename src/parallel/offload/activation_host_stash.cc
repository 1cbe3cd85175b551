// ActivationHostStash: entries in host memory (the backend's staging_host() when pinned),
// crossed by the backend's copies.
#include "parallel/offload/activation_host_stash.h"

#include <string>

namespace zt {

namespace {

size_t stride_for(size_t max_bytes) { return (max_bytes + 63) / 64 * 64; }

}  // namespace

size_t ActivationHostStash::bytes_for(int slots, int blocks, size_t max_bytes) {
  return static_cast<size_t>(slots) * static_cast<size_t>(blocks) * stride_for(max_bytes);
}

StatusOr<std::unique_ptr<ActivationHostStash>> ActivationHostStash::create(const Backend& backend, int slots,
                                                                           int blocks, size_t max_bytes, bool pin) {
  const size_t bytes = bytes_for(slots, blocks, max_bytes);
  const Backend& host = pin ? backend.staging_host() : plain_cpu_backend(backend.compute_dtype());
  ZT_ASSIGN_OR_RETURN(Arena memory, host.allocate(bytes / sizeof(float), DType::kF32,
                                                  "the host copies of checkpointed activations (cpu_checkpointing)"));
  return std::unique_ptr<ActivationHostStash>(new ActivationHostStash(
      backend, std::move(memory), blocks, stride_for(max_bytes), static_cast<size_t>(slots) * static_cast<size_t>(blocks)));
}

Status ActivationHostStash::save(int slot, int block, const void* data, size_t bytes) {
  if (bytes > stride_) {
    return Status::Internal("cpu_checkpointing: block " + std::to_string(block) + "'s input is " +
                            std::to_string(bytes) + " bytes, more than its host entry's " + std::to_string(stride_));
  }
  const size_t i = static_cast<size_t>(slot * blocks_ + block);
  wait_copy(loading_[i]);  // the entry's last load has read it
  backend_.copy_to_host(entry(slot, block), data, bytes);
  sizes_[i] = bytes;
  return Status::OK();
}

Status ActivationHostStash::load(int slot, int block, void* dst) {
  const size_t bytes = sizes_[static_cast<size_t>(slot * blocks_ + block)];
  if (bytes == 0) {
    return Status::Internal("cpu_checkpointing: block " + std::to_string(block) + " of slot " + std::to_string(slot) +
                            " was not saved before its backward");
  }
  // Started, not awaited: the recompute's kernels queued after it see the bytes, and the
  // host goes on queuing them; the entry is left alone until its next save waits.
  loading_[static_cast<size_t>(slot * blocks_ + block)] = backend_.start_copy_from_host(dst, entry(slot, block), bytes);
  return Status::OK();
}

}  // namespace zt
