// The disk ActivationStash; see activation_swap.h.
#include "parallel/offload/activation_swap.h"

#include <fcntl.h>

#include <cstring>

#include "core/check.h"
#include "io/checksum.h"

namespace zt {

StatusOr<std::unique_ptr<ActivationSwap>> ActivationSwap::create(const Backend& backend, IoEngine* io,
                                                                 const std::string& path, int slots, int blocks,
                                                                 size_t max_bytes) {
  ZT_ASSIGN_OR_RETURN(std::unique_ptr<ScratchFile> file, ScratchFile::create(path));
  const size_t stride = round_up_io(std::max<size_t>(max_bytes, 1));
  const size_t entries = static_cast<size_t>(slots) * static_cast<size_t>(blocks);
  if (const int rc = ::posix_fallocate(file->fd(), 0, static_cast<off_t>(stride * entries)); rc != 0) {
    return Status::IOError("cannot reserve " + std::to_string(stride * entries) + " bytes for activation swap file " +
                           path + ": " + std::strerror(rc));
  }
  std::unique_ptr<ActivationSwap> s(new ActivationSwap(backend, io, std::move(file), blocks, stride, entries));
  s->buffers_.resize(kBuffers);
  for (Buffer& b : s->buffers_) {
    ZT_ASSIGN_OR_RETURN(b.mem, IoBuffer::allocate(stride, false, "an activation swap buffer"));
  }
  return s;
}

size_t ActivationSwap::buffer_bytes() const {
  size_t n = 0;
  for (const Buffer& b : buffers_) n += b.mem.bytes();
  return n;
}

ActivationSwap::Buffer* ActivationSwap::find(int k, int state) {
  for (Buffer& b : buffers_) {
    if (b.key == k && b.state == state) return &b;
  }
  return nullptr;
}

StatusOr<ActivationSwap::Buffer*> ActivationSwap::take() {
  Buffer* oldest = nullptr;
  for (Buffer& b : buffers_) {
    if (b.state == Buffer::kFree) return &b;
    if (b.state == Buffer::kWriting && (oldest == nullptr || b.order < oldest->order)) oldest = &b;
  }
  ZT_CHECK(oldest != nullptr, "every activation swap buffer is being read or handed out");
  const Status s = io_->wait(oldest->ticket);
  oldest->state = Buffer::kFree;
  oldest->ticket = nullptr;
  ZT_RETURN_IF_ERROR(s);
  return oldest;
}

Status ActivationSwap::save(int slot, int block, const void* data, size_t bytes) {
  ZT_CHECK(bytes <= stride_, "activation of %zu bytes exceeds its entry (%zu)", bytes, stride_);
  const int k = key(slot, block);
  if (Buffer* pending = find(k, Buffer::kWriting)) {  // the entry's previous write (an earlier micro-batch)
    const Status s = io_->wait(pending->ticket);
    pending->state = Buffer::kFree;
    ZT_RETURN_IF_ERROR(s);
  }
  ZT_ASSIGN_OR_RETURN(Buffer* b, take());
  backend_.copy_to_host(b->mem.data(), data, bytes);
  sums_[static_cast<size_t>(k)] = checksum64(b->mem.data(), bytes);
  sizes_[static_cast<size_t>(k)] = bytes;
  b->state = Buffer::kWriting;
  b->key = k;
  b->order = ++writes_;
  b->ticket = io_->write(*file_, b->mem.data(), round_up_io(bytes), static_cast<uint64_t>(k) * stride_);
  return Status::OK();
}

void ActivationSwap::start_read(Buffer* b, int k) {
  b->state = Buffer::kReading;
  b->key = k;
  b->ticket = io_->read(*file_, b->mem.data(), round_up_io(sizes_[static_cast<size_t>(k)]),
                        static_cast<uint64_t>(k) * stride_);
}

void ActivationSwap::prefetch(int slot, int block, void*) {
  const int k = key(slot, block);
  if (find(k, Buffer::kReading) != nullptr) return;
  if (Buffer* pending = find(k, Buffer::kWriting)) {
    const Status s = io_->wait(pending->ticket);
    pending->state = Buffer::kFree;
    if (!s.ok() && deferred_.ok()) deferred_ = s;
  }
  int free = 0;  // keep one buffer for load()
  for (const Buffer& b : buffers_) free += b.state == Buffer::kFree || b.state == Buffer::kWriting;
  if (free < 2) return;
  StatusOr<Buffer*> b = take();
  if (!b.ok()) {
    if (deferred_.ok()) deferred_ = b.status();
    return;
  }
  start_read(b.value(), k);
}

Status ActivationSwap::load(int slot, int block, void* dst) {
  if (!deferred_.ok()) return std::exchange(deferred_, Status::OK());
  const int k = key(slot, block);
  Buffer* b = find(k, Buffer::kReading);
  if (b == nullptr) {
    if (Buffer* pending = find(k, Buffer::kWriting)) {
      const Status s = io_->wait(pending->ticket);
      pending->state = Buffer::kFree;
      ZT_RETURN_IF_ERROR(s);
    }
    ZT_ASSIGN_OR_RETURN(b, take());
    start_read(b, k);
  }
  const Status s = io_->wait(b->ticket);
  b->ticket = nullptr;
  b->state = Buffer::kFree;  // copied in below, or failed
  ZT_RETURN_IF_ERROR(s);
  const size_t bytes = sizes_[static_cast<size_t>(k)];
  if (const uint64_t got = checksum64(b->mem.data(), bytes); got != sums_[static_cast<size_t>(k)]) {
    return Status::Corruption("activation swap file " + file_->path() + ": block " + std::to_string(block) +
                              " of slot " + std::to_string(slot) + " read back with checksum " + checksum_hex(got) +
                              ", but " + checksum_hex(sums_[static_cast<size_t>(k)]) + " was written");
  }
  backend_.copy_from_host(dst, b->mem.data(), bytes);
  return Status::OK();
}

}  // namespace zt
