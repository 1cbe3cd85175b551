// Fault-injection hooks; see test_hooks.h.
#include "core/test_hooks.h"

#include <csignal>
#include <cstdio>
#include <cstdlib>

namespace zt {

void test_kill_point(int64_t step, int world_rank) {
  static const char* spec = std::getenv("ZT_TEST_SIGKILL_AT_STEP");
  if (spec == nullptr) return;
  long long at = -1;
  int rank = 0;
  if (std::sscanf(spec, "%lld:%d", &at, &rank) < 1) return;
  if (step == at && world_rank == rank) {
    std::fflush(nullptr);
    std::raise(SIGKILL);
  }
}

}  // namespace zt
