// Fault-injection hooks for crash tests, inert unless their environment variable is set.
//   ZT_TEST_SIGKILL_AT_STEP=N[:R]  world rank R (default 0) kills itself with SIGKILL in
//                                  the middle of training step N (after its forward and
//                                  backward, before the optimizer update)
//   ZT_TEST_OVERFLOW_AT_STEP=N[,M...][:R]  world rank R (default 0) writes +inf into its
//                                  first owned gradient after the backward of steps N,
//                                  M, ... (an fp16 overflow on one rank)
// (The torn-write hook, ZT_TEST_ABORT_AFTER_BYTES, lives with the writer: io/atomic_file.h.)
#pragma once

#include <cstdint>

namespace zt {

void test_kill_point(int64_t step, int world_rank);
// True when ZT_TEST_OVERFLOW_AT_STEP names this step and world rank.
bool test_overflow_point(int64_t step, int world_rank);

}  // namespace zt
