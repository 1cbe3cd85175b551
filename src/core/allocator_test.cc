// The process allocator is jemalloc: a plain malloc in this process goes through it (its
// per-thread counter moves by the block's size), so oneDNN's and MPI's blocks do too.
#include "core/allocator.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>

namespace zt {
namespace {

TEST(Allocator, MallocIsJemalloc) {
  EXPECT_EQ(allocator_description().rfind("jemalloc 5", 0), 0u) << allocator_description();
  const size_t before = allocator_thread_allocated_bytes();
  constexpr size_t kBytes = 2524768;  // one of oneDNN's sgemm packing buffers
  void* volatile p = std::malloc(kBytes);
  ASSERT_NE(p, nullptr);
  std::memset(p, 1, 64);
  EXPECT_GE(allocator_thread_allocated_bytes() - before, kBytes) << "malloc did not go through jemalloc";
  std::free(p);
}

}  // namespace
}  // namespace zt
