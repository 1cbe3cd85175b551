// ActivationHostStash: entries in host memory (the backend's staging_host() when pinned),
// crossed by the backend's copies.
#include "parallel/offload/activation_host_stash.h"

#include <string>

#include "core/check.h"

namespace zt {

namespace {

size_t stride_for(size_t max_bytes) { return (max_bytes + 63) / 64 * 64; }

}  // namespace

size_t ActivationHostStash::bytes_for(int slots, int blocks, size_t max_bytes) {
  return static_cast<size_t>(slots) * static_cast<size_t>(blocks) * stride_for(max_bytes);
}

StatusOr<std::unique_ptr<ActivationHostStash>> ActivationHostStash::create(const Backend& backend, int slots,
                                                                           const std::vector<int>& blocks, int n_layer,
                                                                           size_t max_bytes, bool pin) {
  const int count = static_cast<int>(blocks.size());
  std::vector<int> local(static_cast<size_t>(n_layer), -1);
  for (int j = 0; j < count; ++j) local.at(static_cast<size_t>(blocks[static_cast<size_t>(j)])) = j;
  const size_t bytes = bytes_for(slots, count, max_bytes);
  const Backend& host = pin ? backend.staging_host() : plain_cpu_backend(backend.compute_dtype());
  ZT_ASSIGN_OR_RETURN(Arena memory, host.allocate(bytes / sizeof(float), DType::kF32,
                                                  "the host copies of checkpointed activations (cpu_checkpointing)"));
  return std::unique_ptr<ActivationHostStash>(new ActivationHostStash(backend, std::move(memory), std::move(local), count,
                                                                      stride_for(max_bytes),
                                                                      static_cast<size_t>(slots) * static_cast<size_t>(count)));
}

size_t ActivationHostStash::index(int slot, int block) const {
  const int j = local_.at(static_cast<size_t>(block));
  ZT_CHECK(j >= 0, "cpu_checkpointing: block %d's input has no host entry on this stage", block);
  return static_cast<size_t>(slot * blocks_ + j);
}

Status ActivationHostStash::save(int slot, int block, const void* data, size_t bytes) {
  if (bytes > stride_) {
    return Status::Internal("cpu_checkpointing: block " + std::to_string(block) + "'s input is " +
                            std::to_string(bytes) + " bytes, more than its host entry's " + std::to_string(stride_));
  }
  finish_saves();  // the previous block's input, which this block's work overwrites, is out
  const size_t i = index(slot, block);
  if (ahead_ && ahead_->entry == i) release_ahead();
  wait_copy(loading_[i]);  // the entry's last load has read it
  saving_ = backend_.start_copy_to_host(entry(slot, block), data, bytes);
  sizes_[i] = bytes;
  return Status::OK();
}

// A prefetch its load did not claim: joined, so that the kernels that come next are
// ordered after it wrote its buffer (a later copy into that buffer lands after it too:
// the copies from host run in order).
void ActivationHostStash::release_ahead() {
  join_copy(loading_[ahead_->entry]);
  ahead_.reset();
}

void ActivationHostStash::prefetch(int slot, int block, void* dst) {
  const size_t i = index(slot, block);
  if (sizes_[i] == 0) return;  // its load reports it
  if (ahead_) release_ahead();
  finish_saves();  // the entry's bytes are all out
  wait_copy(loading_[i]);
  loading_[i] = backend_.start_prefetch_from_host(dst, entry(slot, block), sizes_[i]);
  ahead_ = Ahead{i, dst};
}

Status ActivationHostStash::load(int slot, int block, void* dst) {
  const size_t i = index(slot, block), bytes = sizes_[i];
  if (bytes == 0) {
    return Status::Internal("cpu_checkpointing: block " + std::to_string(block) + " of slot " + std::to_string(slot) +
                            " was not saved before its backward");
  }
  finish_saves();
  if (ahead_ && ahead_->entry == i && ahead_->dst == dst) {  // prefetched: the work from here on sees it
    join_copy(loading_[i]);
    ahead_.reset();
    return Status::OK();
  }
  if (ahead_) release_ahead();
  wait_copy(loading_[i]);
  // Started, not awaited: the recompute's kernels queued after it see the bytes, and the
  // host goes on queuing them; the entry is left alone until its next save waits.
  loading_[i] = backend_.start_copy_from_host(dst, entry(slot, block), bytes);
  return Status::OK();
}

}  // namespace zt
