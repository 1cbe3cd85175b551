// ActivationSwap: the disk ActivationStash (DeepSpeed's cpu_checkpointing, to NVMe on a
// CPU machine). One scratch file holds a fixed-size entry per (pipeline slot, block); a
// save copies the input into one of a few aligned buffers and writes it behind the
// forward; backward reads an entry back ahead of its block (prefetch) and verifies its
// XXH3 checksum before copying it in, so a changed byte is an error, never a silent
// wrong gradient. The model's memory is crossed only by the backend's copies.
// Invariants: at most one write per entry in flight; a read of an entry waits for its
// write.
// Thread-safety: the training thread only.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "io/async_io.h"
#include "nn/activation_stash.h"

namespace zt {

class ActivationSwap final : public ActivationStash {
 public:
  // slots x blocks entries of at most max_bytes each, in `path` (created, unlinked).
  static StatusOr<std::unique_ptr<ActivationSwap>> create(const Backend& backend, IoEngine* io, const std::string& path,
                                                          int slots, int blocks, size_t max_bytes);
  Status save(int slot, int block, const void* data, size_t bytes) override;
  void prefetch(int slot, int block, void* dst) override;  // into a buffer of its own, not dst
  Status load(int slot, int block, void* dst) override;

  size_t buffer_bytes() const override;
  size_t disk_bytes() const override { return stride_ * sums_.size(); }
  // Buffers for writes behind, one read ahead and the one being copied in.
  static constexpr int kBuffers = 4;
  static size_t buffer_bytes_for(size_t max_bytes) { return kBuffers * round_up_io(max_bytes); }

 private:
  struct Buffer {
    IoBuffer mem;
    enum { kFree, kWriting, kReading } state = kFree;
    int key = -1;
    IoTicket ticket;
    uint64_t order = 0;  // when its write started
  };
  ActivationSwap(const Backend& backend, IoEngine* io, std::unique_ptr<ScratchFile> file, int blocks, size_t stride,
                 size_t entries)
      : backend_(backend), io_(io), file_(std::move(file)), blocks_(blocks), stride_(stride), sums_(entries, 0), sizes_(entries, 0) {}
  int key(int slot, int block) const { return slot * blocks_ + block; }
  // A free buffer, finishing the oldest write if none is free.
  StatusOr<Buffer*> take();
  Buffer* find(int key, int state);
  void start_read(Buffer* b, int key);

  const Backend& backend_;
  IoEngine* io_;
  std::unique_ptr<ScratchFile> file_;
  int blocks_;
  size_t stride_;
  std::vector<uint64_t> sums_;
  std::vector<size_t> sizes_;
  std::vector<Buffer> buffers_;
  uint64_t writes_ = 0;
  Status deferred_;  // an error found by prefetch(), reported by the next load()
};

}  // namespace zt
