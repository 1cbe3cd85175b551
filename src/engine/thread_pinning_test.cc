// pin_compute_threads' switches, without pinning this process: training.pin_threads false,
// and ZT_PIN_THREADS=0 where a launcher says the rank is alone on its host (namespace hosts
// of one machine would otherwise all pin from CPU 0).
#include "engine/thread_pinning.h"

#include <gtest/gtest.h>

#include <cstdlib>

namespace zt {
namespace {

TEST(ThreadPinning, TurnedOffByTheConfigOrTheEnvironment) {
  EXPECT_EQ(pin_compute_threads(false).decision, "not pinned: training.pin_threads is false");
  ::setenv("OMPI_COMM_WORLD_LOCAL_SIZE", "1", 1);
  ::setenv("OMPI_COMM_WORLD_LOCAL_RANK", "0", 1);
  ::setenv("ZT_PIN_THREADS", "0", 1);
  const PinningResult r = pin_compute_threads(true);
  ::unsetenv("ZT_PIN_THREADS");
  ::unsetenv("OMPI_COMM_WORLD_LOCAL_SIZE");
  ::unsetenv("OMPI_COMM_WORLD_LOCAL_RANK");
  EXPECT_EQ(r.decision, "not pinned: ZT_PIN_THREADS=0");
  EXPECT_FALSE(r.topology.empty());
}

}  // namespace
}  // namespace zt
