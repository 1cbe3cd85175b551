// Fault-injection hooks for crash tests, inert unless their environment variable is set.
//   ZT_TEST_SIGKILL_AT_STEP=N[:R]  world rank R (default 0) kills itself with SIGKILL in
//                                  the middle of training step N (after its forward and
//                                  backward, before the optimizer update)
// (The torn-write hook, ZT_TEST_ABORT_AFTER_BYTES, lives with the writer: io/atomic_file.h.)
#pragma once

#include <cstdint>

namespace zt {

void test_kill_point(int64_t step, int world_rank);

}  // namespace zt
