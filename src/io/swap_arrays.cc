// Files, checksums, the pipelined pass and range reads of SwapArrays; see swap_arrays.h.
#include "io/swap_arrays.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <cstdio>
#include <cstdlib>

#include "core/check.h"
#include "io/checksum.h"

namespace zt {

namespace {

constexpr size_t kSets = 3;  // read-ahead, current, write-behind

std::string hex(uint64_t v) { return checksum_hex(v); }

// ZT_TEST_SWAP_CORRUPT=N[:R]: the N-th chunk write of the process, on MPI world rank R
// only when R is given.
long corrupt_target() {
  static const long target = [] {
    const char* v = std::getenv("ZT_TEST_SWAP_CORRUPT");
    if (v == nullptr) return 0L;
    const char* colon = std::strchr(v, ':');
    const char* rank = std::getenv("OMPI_COMM_WORLD_RANK");
    if (colon != nullptr && std::atol(colon + 1) != (rank != nullptr ? std::atol(rank) : 0L)) return 0L;
    return std::atol(v);
  }();
  return target;
}

std::atomic<long> g_chunk_writes{0};

}  // namespace

StatusOr<std::unique_ptr<SwapArrays>> SwapArrays::create(IoEngine* io, const std::string& dir, const std::string& prefix,
                                                         std::vector<SwapArraySpec> arrays, size_t numel,
                                                         size_t chunk_elems, bool pin) {
  const size_t ce = effective_chunk_elems(chunk_elems, numel);
  std::unique_ptr<SwapArrays> s(new SwapArrays(io, std::move(arrays), numel, ce));
  for (const SwapArraySpec& a : s->specs_) {
    ZT_ASSIGN_OR_RETURN(std::unique_ptr<ScratchFile> f, ScratchFile::create((a.dir.empty() ? dir : a.dir) + "/" + prefix + "." + a.name + ".swp"));
    // Reserve the space now: a disk too small fails here, naming the file, not mid-step.
    const off_t bytes = static_cast<off_t>(std::max(round_up_io(numel * a.elem_bytes), kIoAlign));
    if (const int rc = ::posix_fallocate(f->fd(), 0, bytes); rc != 0) {
      return Status::IOError("cannot reserve " + std::to_string(bytes) + " bytes for swap file " + f->path() + ": " +
                             std::strerror(rc));
    }
    s->files_.push_back(std::move(f));
    s->sums_.emplace_back((numel * a.elem_bytes + kSumBlock - 1) / kSumBlock, 0);
  }
  s->sets_.resize(kSets);
  for (size_t k = 0; k < kSets; ++k) {
    for (const SwapArraySpec& a : s->specs_) {
      ZT_ASSIGN_OR_RETURN(IoBuffer b, IoBuffer::allocate(ce * a.elem_bytes, pin, "a swap buffer for " + a.name));
      s->pinned_ = s->pinned_ && b.pinned();
      s->sets_[k].push_back(std::move(b));
    }
  }
  return s;
}

size_t SwapArrays::effective_chunk_elems(size_t chunk_elems, size_t numel) {
  const size_t ce = (std::max<size_t>(chunk_elems, 1) + kChunkAlignElems - 1) / kChunkAlignElems * kChunkAlignElems;
  const size_t whole = std::max(kChunkAlignElems, (numel + kChunkAlignElems - 1) / kChunkAlignElems * kChunkAlignElems);
  return std::min(ce, whole);
}

SwapArrays::~SwapArrays() { (void)unmap(false); }

bool SwapArrays::direct() const {
  for (const auto& f : files_) {
    if (!f->direct()) return false;
  }
  return true;
}

size_t SwapArrays::buffer_bytes() const {
  size_t n = 0;
  for (const auto& set : sets_) {
    for (const IoBuffer& b : set) n += b.bytes();
  }
  return n;
}

size_t SwapArrays::disk_bytes() const {
  size_t n = 0;
  for (const SwapArraySpec& a : specs_) n += round_up_io(numel_ * a.elem_bytes);
  return n;
}

void SwapArrays::set_sums(size_t a, uint64_t off, const unsigned char* data, size_t bytes) {
  const std::vector<uint64_t> sums = checksum_blocks(data, bytes, kSumBlock);
  for (size_t i = 0; i < sums.size(); ++i) sums_[a][off / kSumBlock + i] = sums[i];
}

Status SwapArrays::verify(size_t a, uint64_t off, const unsigned char* data, size_t bytes) const {
  const std::vector<uint64_t> sums = checksum_blocks(data, bytes, kSumBlock);
  for (size_t i = 0; i < sums.size(); ++i) {
    const size_t block = off / kSumBlock + i;
    const uint64_t got = sums[i];
    if (got != sums_[a][block]) {
      return Status::Corruption("swap file " + files_[a]->path() + ": block " + std::to_string(block) + " (bytes " +
                                std::to_string(block * kSumBlock) + "+) read back with checksum " + hex(got) +
                                ", but " + hex(sums_[a][block]) + " was written; the update was not applied");
    }
  }
  return Status::OK();
}

void SwapArrays::maybe_corrupt(size_t a, uint64_t offset) const {
  if (corrupt_target() <= 0 || ++g_chunk_writes != corrupt_target()) return;
  const std::string proc = "/proc/self/fd/" + std::to_string(files_[a]->fd());
  const int fd = ::open(proc.c_str(), O_RDWR | O_CLOEXEC);  // buffered: any byte, any offset
  unsigned char byte = 0;
  if (fd >= 0 && ::pread(fd, &byte, 1, static_cast<off_t>(offset)) == 1) {
    byte ^= 0x5a;
    if (::pwrite(fd, &byte, 1, static_cast<off_t>(offset)) == 1) {
      std::fprintf(stderr, "ZT_TEST_SWAP_CORRUPT: flipped a byte of %s at offset %llu\n", files_[a]->path().c_str(),
                   static_cast<unsigned long long>(offset));
    }
  }
  if (fd >= 0) ::close(fd);
}

void SwapArrays::start_chunk_reads(size_t c, size_t set, const std::vector<bool>& read, std::vector<IoTicket>* out) {
  out->assign(specs_.size(), nullptr);
  for (size_t a = 0; a < specs_.size(); ++a) {
    if (!read[a]) continue;
    (*out)[a] = io_->read(*files_[a], sets_[set][a].data(), round_up_io(chunk_len(c) * specs_[a].elem_bytes),
                          chunk_offset(a, c));
  }
}

Status SwapArrays::stream(const std::vector<bool>& read, const std::vector<bool>& write, const ChunkFn& fn) {
  ZT_CHECK(read.size() == specs_.size() && write.size() == specs_.size(), "stream: %zu/%zu flags for %zu arrays",
           read.size(), write.size(), specs_.size());
  const size_t C = chunks();
  std::vector<IoTicket> reads[kSets], writes[kSets];
  long written_chunk[kSets] = {-1, -1, -1};
  Status failed;
  auto note = [&](Status s) {
    if (failed.ok() && !s.ok()) failed = std::move(s);
  };
  auto drain_writes = [&](size_t set) {
    for (size_t a = 0; a < writes[set].size(); ++a) {
      if (writes[set][a] == nullptr) continue;
      const Status s = io_->wait(writes[set][a]);
      note(s);
      if (s.ok()) maybe_corrupt(a, chunk_offset(a, static_cast<size_t>(written_chunk[set])));
    }
    writes[set].clear();
  };
  if (C > 0) start_chunk_reads(0, 0, read, &reads[0]);
  std::vector<void*> ptrs(specs_.size());
  for (size_t c = 0; c < C && failed.ok(); ++c) {
    const size_t s = c % kSets, n = chunk_len(c);
    for (size_t a = 0; a < specs_.size(); ++a) {
      if (reads[s][a] == nullptr) continue;
      Status st = io_->wait(reads[s][a]);
      reads[s][a] = nullptr;
      if (st.ok()) st = verify(a, chunk_offset(a, c), sets_[s][a].data(), n * specs_[a].elem_bytes);
      note(std::move(st));
    }
    if (!failed.ok()) break;
    if (c + 1 < C) {  // read ahead into the set that chunk c-2 was written from
      const size_t next = (c + 1) % kSets;
      drain_writes(next);
      start_chunk_reads(c + 1, next, read, &reads[next]);
    }
    for (size_t a = 0; a < specs_.size(); ++a) ptrs[a] = sets_[s][a].data();
    note(fn(c * chunk_elems_, n, ptrs.data()));
    if (!failed.ok()) break;
    writes[s].assign(specs_.size(), nullptr);
    written_chunk[s] = static_cast<long>(c);
    for (size_t a = 0; a < specs_.size(); ++a) {
      if (!write[a]) continue;
      set_sums(a, chunk_offset(a, c), sets_[s][a].data(), n * specs_[a].elem_bytes);
      writes[s][a] = io_->write(*files_[a], sets_[s][a].data(), round_up_io(n * specs_[a].elem_bytes), chunk_offset(a, c));
    }
  }
  for (size_t k = 0; k < kSets; ++k) {  // nothing stays in flight past the pass, even after an error
    for (const IoTicket& t : reads[k]) {
      if (t != nullptr) (void)io_->wait(t);
    }
    drain_writes(k);
  }
  return failed;
}

size_t SwapArrays::staging_bytes(size_t a, size_t begin, size_t end) const {
  const size_t eb = specs_[a].elem_bytes;
  const size_t lo = begin * eb / kSumBlock * kSumBlock;
  const size_t hi = std::min((end * eb + kSumBlock - 1) / kSumBlock * kSumBlock, round_up_io(numel_ * eb));
  return hi - lo;
}

SwapArrays::RangeRead SwapArrays::start_read(size_t a, size_t begin, size_t end, unsigned char* staging) {
  ZT_CHECK(begin < end && end <= numel_, "range read [%zu, %zu) of %zu elements", begin, end, numel_);
  const size_t eb = specs_[a].elem_bytes;
  const size_t lo = begin * eb / kSumBlock * kSumBlock;
  RangeRead r;
  r.array = a;
  r.first_block = lo / kSumBlock;
  r.last_block = (end * eb + kSumBlock - 1) / kSumBlock;
  r.staging = staging;
  r.skip = begin * eb - lo;
  r.ticket = io_->read(*files_[a], staging, staging_bytes(a, begin, end), lo);
  return r;
}

StatusOr<const void*> SwapArrays::finish_read(const RangeRead& r) {
  ZT_RETURN_IF_ERROR(io_->wait(r.ticket));
  const size_t data_end = numel_ * specs_[r.array].elem_bytes;
  const size_t lo = r.first_block * kSumBlock, hi = std::min(r.last_block * kSumBlock, data_end);
  ZT_RETURN_IF_ERROR(verify(r.array, lo, r.staging, hi - lo));
  return static_cast<const void*>(r.staging + r.skip);
}

StatusOr<void*> SwapArrays::map(size_t a, bool writable) {
  const size_t bytes = std::max<size_t>(round_up_io(numel_ * specs_[a].elem_bytes), kIoAlign);
  const int prot = PROT_READ | (writable ? PROT_WRITE : 0);
  void* p = ::mmap(nullptr, bytes, prot, MAP_SHARED, files_[a]->fd(), 0);
  if (p == MAP_FAILED) return Status::IOError("cannot map swap file " + files_[a]->path() + " for a checkpoint");
  maps_.push_back({a, p, bytes});
  return p;
}

Status SwapArrays::unmap(bool written) {
  Status s;
  for (const Mapping& m : maps_) {
    if (written) {
      set_sums(m.array, 0, static_cast<const unsigned char*>(m.data), numel_ * specs_[m.array].elem_bytes);
      if (::msync(m.data, m.bytes, MS_SYNC) != 0 && s.ok()) {
        s = Status::IOError("msync of swap file " + files_[m.array]->path() + " failed: " + std::strerror(errno));
      }
    }
    ::munmap(m.data, m.bytes);
  }
  maps_.clear();
  return s;
}

}  // namespace zt
