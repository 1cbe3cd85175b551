// The guarded backend's crossings as a device's: copies check which side each end is
// on, and started copies happen as late as a device could make them.
#include "backend/cpu/guarded_backend.h"

#include <gtest/gtest.h>

#include <vector>

namespace zt {
namespace {

TEST(GuardedBackend, StartedCopyToHostArrivesAtWait) {
  const Backend& b = guarded_cpu_backend(DType::kF32);
  Arena a = b.allocate(4, DType::kF32, "test").value();
  const std::vector<float> values = {1, 2, 3, 4};
  b.copy_from_host(a.data(), values.data(), sizeof(float) * 4);
  std::vector<float> out(4, 0.0f);
  CopyHandle h = b.start_copy_to_host(out.data(), a.data(), sizeof(float) * 4);
  EXPECT_EQ(out, std::vector<float>(4, 0.0f));  // a host read before the wait sees old bytes
  wait_copy(h);
  EXPECT_EQ(out, values);
}

TEST(GuardedBackendDeathTest, StartedCopyFromHostNeedsItsSourceUntilWait) {
  const Backend& b = guarded_cpu_backend(DType::kF32);
  Arena a = b.allocate(4, DType::kF32, "test").value();
  std::vector<float> src = {1, 2, 3, 4};
  EXPECT_DEATH(
      {
        CopyHandle h = b.start_copy_from_host(a.data(), src.data(), sizeof(float) * 4);
        src[0] = 5;
        wait_copy(h);
      },
      "was written before wait_copy");
}

TEST(GuardedBackendDeathTest, CopyRefusesHostMemory) {
  const Backend& b = guarded_cpu_backend(DType::kF32);
  Arena a = b.allocate(4, DType::kF32, "test").value();
  std::vector<float> host(4);
  EXPECT_DEATH(b.copy(a.data(), host.data(), sizeof(float) * 4), "copy \\(source\\) got a host-memory pointer");
  EXPECT_DEATH(b.copy_to_host(host.data(), host.data(), sizeof(float) * 4), "copy_to_host \\(source\\)");
}

}  // namespace
}  // namespace zt
