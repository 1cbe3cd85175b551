// SwapArrays: parallel arrays of `numel` elements each (fp32 master, Adam moments, a
// parameter shard) that live in scratch files instead of memory, cut into chunks of
// `chunk_elems` elements (DeepSpeed's sub_group_size). stream() is DeepSpeed's
// pipelined optimizer swapper: while chunk i is being updated, chunk i+1 is read and
// chunk i-1 written, through three sets of aligned (pinned when allowed) buffers.
//
// Integrity: every kSumBlock bytes of every array carry an XXH3-64 checksum, kept in
// memory and set when the block is written; every read verifies the blocks it covers,
// and a mismatch is a Corruption error naming the file, the block and both checksums:
// never a silent wrong update. Test hook: ZT_TEST_SWAP_CORRUPT=N[:R] flips one byte in
// the file of the N-th chunk write (of any array) of the process, after the write
// completed; with :R only on MPI world rank R.
//
// Layout: array a is one file, "<dir>/<prefix>.<name>.swp", holding its elements
// contiguously (chunk c at byte c * chunk_elems * elem_bytes), so map() can show a
// whole array to checkpoint code as ordinary memory backed by the page cache.
// Invariants: chunk_elems is a multiple of kChunkAlignElems, which makes every chunk
// start on a checksum block; a chunk's buffer holds its elements in order.
// Thread-safety: one thread drives it; the IoEngine's workers do the transfers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "io/async_io.h"

namespace zt {

inline constexpr size_t kSumBlock = 64 * 1024;      // bytes per checksum
inline constexpr size_t kChunkAlignElems = 32768;   // chunk_elems granularity (64 KiB of 2-byte elements)

struct SwapArraySpec {
  std::string name;   // file name part: "master", "exp_avg", ...
  size_t elem_bytes;  // 2 or 4
  std::string dir;    // its folder; empty: the SwapArrays' dir
};

// One chunk in the buffers: elements [begin, begin + n) of every array.
using ChunkFn = std::function<Status(size_t begin, size_t n, void* const* arrays)>;

class SwapArrays {
 public:
  // chunk_elems is rounded up to kChunkAlignElems and capped at numel's rounding
  // (effective_chunk_elems).
  static size_t effective_chunk_elems(size_t chunk_elems, size_t numel);
  static StatusOr<std::unique_ptr<SwapArrays>> create(IoEngine* io, const std::string& dir, const std::string& prefix,
                                                      std::vector<SwapArraySpec> arrays, size_t numel,
                                                      size_t chunk_elems, bool pin);
  ~SwapArrays();

  size_t numel() const { return numel_; }
  size_t chunk_elems() const { return chunk_elems_; }
  size_t chunks() const { return numel_ == 0 ? 0 : (numel_ + chunk_elems_ - 1) / chunk_elems_; }
  const std::vector<SwapArraySpec>& specs() const { return specs_; }
  bool direct() const;  // every file is O_DIRECT

  // Visits every chunk in order with read-ahead and write-behind. read[a]: array a is
  // read in before fn sees the chunk (false: its buffer holds stale data, and fn must
  // write all of it if it is written back); write[a]: array a is written back after fn.
  // Stops at the first error of fn or of any transfer.
  Status stream(const std::vector<bool>& read, const std::vector<bool>& write, const ChunkFn& fn);

  // Elements r of array a into `staging` (at least staging_bytes(a, r) bytes, aligned):
  // whole checksum blocks are read and verified; the result points at element r.begin.
  size_t staging_bytes(size_t a, size_t begin, size_t end) const;
  struct RangeRead {
    IoTicket ticket;
    size_t array, first_block, last_block;  // checksum blocks covered, [first, last)
    unsigned char* staging;
    size_t skip;  // bytes from staging to element begin
  };
  RangeRead start_read(size_t a, size_t begin, size_t end, unsigned char* staging);
  StatusOr<const void*> finish_read(const RangeRead& r);

  // Whole arrays as memory (the page cache), for checkpoints; nothing may be in flight.
  // After writes through a writable mapping, unmap(true) re-checksums the arrays.
  StatusOr<void*> map(size_t a, bool writable);
  Status unmap(bool written);

  size_t buffer_bytes() const;                 // the three buffer sets
  size_t disk_bytes() const;                   // the files' sizes
  bool pinned() const { return pinned_; }      // every buffer is locked in memory
  const std::string& path(size_t a) const { return files_[a]->path(); }

 private:
  SwapArrays(IoEngine* io, std::vector<SwapArraySpec> specs, size_t numel, size_t chunk_elems)
      : io_(io), specs_(std::move(specs)), numel_(numel), chunk_elems_(chunk_elems) {}
  size_t chunk_len(size_t c) const { return std::min(chunk_elems_, numel_ - c * chunk_elems_); }
  uint64_t chunk_offset(size_t a, size_t c) const { return c * chunk_elems_ * specs_[a].elem_bytes; }
  void start_chunk_reads(size_t c, size_t set, const std::vector<bool>& read, std::vector<IoTicket>* out);
  Status verify(size_t a, uint64_t file_offset, const unsigned char* data, size_t bytes) const;
  void set_sums(size_t a, uint64_t file_offset, const unsigned char* data, size_t bytes);
  void maybe_corrupt(size_t a, uint64_t offset) const;

  IoEngine* io_;
  std::vector<SwapArraySpec> specs_;
  size_t numel_, chunk_elems_;
  std::vector<std::unique_ptr<ScratchFile>> files_;
  std::vector<std::vector<uint64_t>> sums_;  // per array, per checksum block
  std::vector<std::vector<IoBuffer>> sets_;  // [3][array]
  struct Mapping {
    size_t array;
    void* data;
    size_t bytes;
  };
  std::vector<Mapping> maps_;
  bool pinned_ = true;
};

}  // namespace zt
