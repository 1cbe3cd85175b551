// The process allocator's figures; see allocator.h.
#include "core/allocator.h"

#include <jemalloc/jemalloc.h>

#include <cstdint>

namespace zt {

std::string allocator_description() {
  const char* version = nullptr;
  size_t len = sizeof(version);
  if (mallctl("version", &version, &len, nullptr, 0) != 0 || version == nullptr) return "jemalloc (version unknown)";
  return std::string("jemalloc ") + version;
}

size_t allocator_thread_allocated_bytes() {
  uint64_t bytes = 0;
  size_t len = sizeof(bytes);
  if (mallctl("thread.allocated", &bytes, &len, nullptr, 0) != 0) return 0;
  return static_cast<size_t>(bytes);
}

}  // namespace zt
