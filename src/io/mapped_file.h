// A whole file mapped read-only (MAP_PRIVATE, pages populated up front): readers of big
// files (checkpoint shards) check and use the bytes in place instead of copying them.
// The checkpoint and token-file writers replace files by rename, so a mapped file keeps
// its contents; truncating one in place behind a reader would SIGBUS it.
// Thread-safety: immutable after open; move-only.
#pragma once

#include <cstddef>
#include <string>

#include "core/status.h"

namespace zt {

class MappedFile {
 public:
  // NotFound for a missing file, IOError naming it otherwise. An empty file maps to
  // size() == 0 and a non-null data().
  static StatusOr<MappedFile> open(const std::string& path);
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();

  const char* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  MappedFile() = default;
  const char* data_ = "";
  size_t size_ = 0;
  void* map_ = nullptr;  // null for an empty file
};

}  // namespace zt
