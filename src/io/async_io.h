// Asynchronous file I/O for swapping (NVMe offload): scratch files opened with O_DIRECT
// (buffered where the file system refuses it), and an engine of worker threads, each
// driving its own io_uring (liburing), that splits every request into `block_size`
// pieces and keeps up to `queue_depth` of them in flight. This is DeepSpeed's `aio`
// block: block_size, queue_depth, thread_count (its docs' name for the number of I/O
// threads), single_submit (one io_uring_submit per block instead of per batch) and
// overlap_events (keep the queue full, reaping one completion at a time, instead of
// submitting a full queue and waiting for all of it).
//
// Where the kernel refuses io_uring (seccomp, old kernels), the workers fall back to
// pread/pwrite, and mode() says so for the banner. Every error names the file, the
// operation and the byte offset; a short read or write is an error, never retried
// silently.
//
// Invariants: in direct mode buffers, offsets and lengths are multiples of kIoAlign
// (checked). A request's buffer must stay alive until wait() returns for it.
// Thread-safety: submit and wait from any thread; the engine owns its workers.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/status.h"
#include "io/aio_config.h"

namespace zt {


// A swap file: created empty (an existing file of the name is replaced) and unlinked at
// once, so it disappears when the object is destroyed or the process dies however it
// dies; it is never read across runs.
class ScratchFile {
 public:
  // Opens `path` with O_DIRECT, or buffered where the file system refuses O_DIRECT
  // (ZT_TEST_NO_ODIRECT=1 forces that path for tests).
  static StatusOr<std::unique_ptr<ScratchFile>> create(const std::string& path);
  ~ScratchFile();
  ScratchFile(const ScratchFile&) = delete;
  ScratchFile& operator=(const ScratchFile&) = delete;
  int fd() const { return fd_; }
  bool direct() const { return direct_; }
  const std::string& path() const { return path_; }

 private:
  ScratchFile(std::string path, int fd, bool direct) : path_(std::move(path)), fd_(fd), direct_(direct) {}
  std::string path_;
  int fd_;
  bool direct_;
};

// One request in flight; wait for it with IoEngine::wait.
struct IoRequest {
  const ScratchFile* file;
  bool write;
  uint64_t offset;
  size_t bytes;
  std::atomic<int> remaining{0};  // pieces not yet completed
  std::string error;              // first failure (guarded by the engine's mutex)
};
using IoTicket = std::shared_ptr<IoRequest>;

class IoEngine {
 public:
  static StatusOr<std::unique_ptr<IoEngine>> create(const AioConfig& config);
  ~IoEngine();  // finishes what is in flight, then stops the workers
  IoEngine(const IoEngine&) = delete;
  IoEngine& operator=(const IoEngine&) = delete;

  IoTicket read(const ScratchFile& f, void* buf, size_t bytes, uint64_t offset);
  IoTicket write(const ScratchFile& f, const void* buf, size_t bytes, uint64_t offset);
  // Blocks until every piece of `t` is done; the first error of the request, if any.
  Status wait(const IoTicket& t);

  // "io_uring" or "pread/pwrite threads (io_uring unavailable: ...)".
  const std::string& mode() const { return mode_; }
  uint64_t bytes_read() const { return bytes_read_.load(); }
  uint64_t bytes_written() const { return bytes_written_.load(); }

 private:
  struct Piece {
    IoRequest* req;
    IoTicket keep;  // keeps the request alive until its last piece completes
    unsigned char* buf;
    size_t bytes;
    uint64_t offset;
  };
  struct Worker;
  explicit IoEngine(const AioConfig& config);
  IoTicket submit(const ScratchFile& f, bool write, unsigned char* buf, size_t bytes, uint64_t offset);
  void run(Worker* w);
  void run_uring(Worker* w);
  void run_sync(Worker* w);
  void complete(const Piece& p, long result);

  AioConfig config_;
  std::string mode_;
  std::vector<std::unique_ptr<Worker>> workers_;
  size_t next_worker_ = 0;
  std::mutex done_mu_;
  std::condition_variable done_cv_;
  std::atomic<uint64_t> bytes_read_{0}, bytes_written_{0};
};

// An aligned, zeroed buffer for direct I/O; locked in memory (pinned) when asked and
// allowed. pinned() says whether mlock succeeded.
class IoBuffer {
 public:
  static StatusOr<IoBuffer> allocate(size_t bytes, bool pin, const std::string& what);
  IoBuffer() = default;
  IoBuffer(IoBuffer&& o) noexcept { *this = std::move(o); }
  IoBuffer& operator=(IoBuffer&& o) noexcept;
  ~IoBuffer();
  unsigned char* data() const { return data_; }
  size_t bytes() const { return bytes_; }
  bool pinned() const { return pinned_; }

 private:
  unsigned char* data_ = nullptr;
  size_t bytes_ = 0;
  bool pinned_ = false;
};

inline size_t round_up_io(size_t bytes) { return (bytes + kIoAlign - 1) / kIoAlign * kIoAlign; }

}  // namespace zt
