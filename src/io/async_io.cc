// The io_uring engine, its pread/pwrite fallback, scratch files and aligned buffers; see
// async_io.h. Test hook: ZT_TEST_IO_ERROR=N makes the N-th completed piece of the process
// fail with EIO (an I/O error the disk would report).
#include "io/async_io.h"

#include <pthread.h>

#include <fcntl.h>
#include <liburing.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <deque>

#include "core/check.h"

namespace zt {

struct IoEngine::Worker {
  std::thread thread;
  std::mutex mu;
  std::condition_variable cv;
  std::deque<Piece> queue;
  bool stop = false;
  io_uring ring{};
  bool uring = false;
};

namespace {

std::string errno_text(int err) { return std::strerror(err); }

bool injected_io_error() {
  static const long target = [] {
    const char* v = std::getenv("ZT_TEST_IO_ERROR");
    return v != nullptr ? std::atol(v) : 0L;
  }();
  static std::atomic<long> count{0};
  return target > 0 && ++count == target;
}

}  // namespace

StatusOr<std::unique_ptr<ScratchFile>> ScratchFile::create(const std::string& path) {
  const bool no_direct = std::getenv("ZT_TEST_NO_ODIRECT") != nullptr;
  int fd = no_direct ? -1 : ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_DIRECT | O_CLOEXEC, 0600);
  bool direct = fd >= 0;
  if (fd < 0 && (no_direct || errno == EINVAL)) {  // the file system refuses O_DIRECT
    fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  }
  if (fd < 0) return Status::IOError("cannot create swap file " + path + ": " + errno_text(errno));
  ::unlink(path.c_str());  // scratch: gone with the last descriptor
  return std::unique_ptr<ScratchFile>(new ScratchFile(path, fd, direct));
}

ScratchFile::~ScratchFile() { ::close(fd_); }

StatusOr<std::unique_ptr<IoEngine>> IoEngine::create(const AioConfig& config) {
  ZT_RETURN_IF_ERROR(config.validate());
  std::unique_ptr<IoEngine> e(new IoEngine(config));
  std::string refused;
  for (int i = 0; i < config.thread_count; ++i) {
    auto w = std::make_unique<Worker>();
    const int rc = std::getenv("ZT_TEST_NO_URING") != nullptr ? -ENOSYS
                                                               : io_uring_queue_init(static_cast<unsigned>(config.queue_depth), &w->ring, 0);
    w->uring = rc == 0;
    if (rc != 0) refused = errno_text(-rc);
    e->workers_.push_back(std::move(w));
  }
  e->mode_ = refused.empty() ? "io_uring" : "pread/pwrite threads (io_uring unavailable: " + refused + ")";
  for (auto& w : e->workers_) {
    w->thread = std::thread([p = e.get(), w = w.get()] {
      pthread_setname_np(pthread_self(), "zt-io");  // not a compute thread
      p->run(w);
    });
  }
  return e;
}

IoEngine::IoEngine(const AioConfig& config) : config_(config) {}

IoEngine::~IoEngine() {
  for (auto& w : workers_) {
    {
      std::lock_guard<std::mutex> lk(w->mu);
      w->stop = true;
    }
    w->cv.notify_one();
    w->thread.join();
    if (w->uring) io_uring_queue_exit(&w->ring);
  }
}

IoTicket IoEngine::read(const ScratchFile& f, void* buf, size_t bytes, uint64_t offset) {
  return submit(f, false, static_cast<unsigned char*>(buf), bytes, offset);
}

IoTicket IoEngine::write(const ScratchFile& f, const void* buf, size_t bytes, uint64_t offset) {
  return submit(f, true, static_cast<unsigned char*>(const_cast<void*>(buf)), bytes, offset);
}

IoTicket IoEngine::submit(const ScratchFile& f, bool write, unsigned char* buf, size_t bytes, uint64_t offset) {
  if (f.direct()) {
    ZT_CHECK(reinterpret_cast<uintptr_t>(buf) % kIoAlign == 0 && offset % kIoAlign == 0 && bytes % kIoAlign == 0,
             "direct I/O on %s must be %zu-byte aligned (buffer, offset %llu, %zu bytes)", f.path().c_str(), kIoAlign,
             static_cast<unsigned long long>(offset), bytes);
  }
  auto req = std::make_shared<IoRequest>();
  req->file = &f;
  req->write = write;
  req->offset = offset;
  req->bytes = bytes;
  const size_t block = config_.block_size;
  const int pieces = static_cast<int>((bytes + block - 1) / block);
  req->remaining = pieces;
  for (int i = 0; i < pieces; ++i) {
    const size_t at = static_cast<size_t>(i) * block;
    Worker* w = workers_[next_worker_++ % workers_.size()].get();
    {
      std::lock_guard<std::mutex> lk(w->mu);
      w->queue.push_back(Piece{req.get(), req, buf + at, std::min(block, bytes - at), offset + at});
    }
    w->cv.notify_one();
  }
  return req;
}

Status IoEngine::wait(const IoTicket& t) {
  std::unique_lock<std::mutex> lk(done_mu_);
  done_cv_.wait(lk, [&] { return t->remaining.load() == 0; });
  return t->error.empty() ? Status::OK() : Status::IOError(t->error);
}

void IoEngine::complete(const Piece& p, long result) {
  const IoRequest& r = *p.req;
  const char* op = r.write ? "writing" : "reading";
  std::string error;
  if (injected_io_error()) result = -EIO;
  if (result < 0) {
    error = std::string(op) + " swap file " + r.file->path() + " at offset " + std::to_string(p.offset) + " (" +
            std::to_string(p.bytes) + " bytes): " + errno_text(static_cast<int>(-result));
  } else if (static_cast<size_t>(result) < p.bytes) {
    error = std::string("short ") + (r.write ? "write" : "read") + " of swap file " + r.file->path() + " at offset " +
            std::to_string(p.offset) + ": " + std::to_string(result) + " of " + std::to_string(p.bytes) + " bytes";
  } else {
    (r.write ? bytes_written_ : bytes_read_) += p.bytes;
  }
  std::lock_guard<std::mutex> lk(done_mu_);
  if (!error.empty() && p.req->error.empty()) p.req->error = error;
  if (--p.req->remaining == 0) done_cv_.notify_all();
}

void IoEngine::run(Worker* w) {
  if (w->uring) {
    run_uring(w);
  } else {
    run_sync(w);
  }
}

void IoEngine::run_sync(Worker* w) {
  for (;;) {
    Piece p;
    {
      std::unique_lock<std::mutex> lk(w->mu);
      w->cv.wait(lk, [&] { return w->stop || !w->queue.empty(); });
      if (w->queue.empty()) return;
      p = std::move(w->queue.front());
      w->queue.pop_front();
    }
    const int fd = p.req->file->fd();
    const ssize_t n = p.req->write ? ::pwrite(fd, p.buf, p.bytes, static_cast<off_t>(p.offset))
                                   : ::pread(fd, p.buf, p.bytes, static_cast<off_t>(p.offset));
    complete(p, n < 0 ? -errno : n);
  }
}

void IoEngine::run_uring(Worker* w) {
  const size_t depth = static_cast<size_t>(config_.queue_depth);
  size_t inflight = 0;
  for (;;) {
    std::vector<Piece*> batch;
    {
      std::unique_lock<std::mutex> lk(w->mu);
      if (inflight == 0) w->cv.wait(lk, [&] { return w->stop || !w->queue.empty(); });
      if (inflight == 0 && w->queue.empty()) return;  // stopping, nothing left
      const size_t room = (config_.overlap_events || inflight == 0) ? depth - inflight : 0;
      while (batch.size() < room && !w->queue.empty()) {
        batch.push_back(new Piece(std::move(w->queue.front())));
        w->queue.pop_front();
      }
    }
    for (Piece* p : batch) {
      io_uring_sqe* sqe = io_uring_get_sqe(&w->ring);
      ZT_CHECK(sqe != nullptr, "io_uring submission queue full");
      if (p->req->write) {
        io_uring_prep_write(sqe, p->req->file->fd(), p->buf, static_cast<unsigned>(p->bytes), p->offset);
      } else {
        io_uring_prep_read(sqe, p->req->file->fd(), p->buf, static_cast<unsigned>(p->bytes), p->offset);
      }
      io_uring_sqe_set_data(sqe, p);
      if (config_.single_submit) io_uring_submit(&w->ring);
    }
    if (!config_.single_submit && !batch.empty()) io_uring_submit(&w->ring);
    inflight += batch.size();
    // Reap: one completion (and whatever else is ready) when overlapping, else all.
    const size_t until = config_.overlap_events ? inflight - 1 : 0;
    while (inflight > until) {
      io_uring_cqe* cqe = nullptr;
      const int rc = io_uring_wait_cqe(&w->ring, &cqe);
      if (rc == -EINTR) continue;
      ZT_CHECK(rc == 0, "io_uring_wait_cqe: %s", std::strerror(-rc));
      do {
        Piece* p = static_cast<Piece*>(io_uring_cqe_get_data(cqe));
        const long res = cqe->res;
        io_uring_cqe_seen(&w->ring, cqe);
        complete(*p, res);
        delete p;
        --inflight;
      } while (inflight > 0 && io_uring_peek_cqe(&w->ring, &cqe) == 0 && cqe != nullptr);
    }
  }
}

StatusOr<IoBuffer> IoBuffer::allocate(size_t bytes, bool pin, const std::string& what) {
  IoBuffer b;
  b.bytes_ = round_up_io(std::max<size_t>(bytes, 1));
  void* p = nullptr;
  if (posix_memalign(&p, kIoAlign, b.bytes_) != 0) {
    return Status::ResourceExhausted("out of memory allocating " + what + " (" + std::to_string(b.bytes_) + " bytes)");
  }
  b.data_ = static_cast<unsigned char*>(p);
  std::memset(b.data_, 0, b.bytes_);
  b.pinned_ = pin && ::mlock(b.data_, b.bytes_) == 0;
  return b;
}

IoBuffer& IoBuffer::operator=(IoBuffer&& o) noexcept {
  if (this != &o) {
    this->~IoBuffer();
    data_ = o.data_;
    bytes_ = o.bytes_;
    pinned_ = o.pinned_;
    o.data_ = nullptr;
    o.bytes_ = 0;
    o.pinned_ = false;
  }
  return *this;
}

IoBuffer::~IoBuffer() {
  if (data_ == nullptr) return;
  if (pinned_) ::munlock(data_, bytes_);
  std::free(data_);
  data_ = nullptr;
}

}  // namespace zt
