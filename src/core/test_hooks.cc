// Fault-injection hooks; see test_hooks.h.
#include "core/test_hooks.h"

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <string>

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

bool test_overflow_point(int64_t step, int world_rank) {
  const char* spec = std::getenv("ZT_TEST_OVERFLOW_AT_STEP");  // read every step: in-process tests set it
  if (spec == nullptr) return false;
  const std::string s = spec;
  const size_t colon = s.find(':');
  const int rank = colon == std::string::npos ? 0 : std::atoi(s.c_str() + colon + 1);
  if (rank != world_rank) return false;
  const std::string steps = s.substr(0, colon);
  size_t pos = 0;
  while (pos <= steps.size()) {
    const size_t comma = std::min(steps.find(',', pos), steps.size());
    if (std::atoll(steps.substr(pos, comma - pos).c_str()) == step) return true;
    pos = comma + 1;
  }
  return false;
}

}  // namespace zt
