// Durable whole-file writes: write to "<path>.tmp.<pid>", fsync it, rename over
// <path>, fsync the directory (the POSIX rule from fsync(2)). A crash at any point
// leaves either the old file or the complete new one, never a torn file under <path>.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/progress_fn.h"
#include "core/status.h"

namespace zt {

// Writes `size` bytes (possibly gathered from several pieces) atomically to `path`.
struct ByteSpan {
  const void* data;
  size_t size;
};
// progress (optional) hears after every piece how many of the bytes are written.
Status write_file_atomic(const std::string& path, const ByteSpan* pieces, size_t count,
                         const ProgressFn& progress = {});
Status write_file_atomic(const std::string& path, std::string_view contents);

// Test hook for torn-write tests: after `bytes` more bytes have been written by
// write_file_atomic (counted across calls, in this process), the process kills itself
// with SIGKILL in the middle of the write. Negative disarms. The checkpoint writer arms
// it from ZT_TEST_ABORT_AFTER_BYTES; nothing else uses it.
void arm_torn_write_hook(long long bytes);

// Reads a whole file. NotFound if it does not exist; Corruption naming the file if it
// is larger than max_bytes (checked before anything is allocated); IOError otherwise.
StatusOr<std::string> read_file(const std::string& path, size_t max_bytes = SIZE_MAX);

}  // namespace zt
