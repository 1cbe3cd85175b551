// Reading this process's /proc/self/smaps in tests: whether the mapping that holds an
// address may be backed by transparent huge pages. Tests only.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

namespace zt::testing {

// The THPeligible field of the mapping that holds p; -1 where smaps does not say (a kernel
// before 5.0, or p unmapped).
inline int thp_eligible(const void* p) {
  const uintptr_t a = reinterpret_cast<uintptr_t>(p);
  std::ifstream in("/proc/self/smaps");
  std::string line;
  bool inside = false;
  while (std::getline(in, line)) {
    unsigned long lo = 0, hi = 0;
    // A mapping's header line starts "lo-hi perms ..."; its fields follow until the next.
    if (std::sscanf(line.c_str(), "%lx-%lx ", &lo, &hi) == 2) {
      inside = a >= lo && a < hi;
    } else if (inside && line.rfind("THPeligible:", 0) == 0) {
      return std::atoi(line.c_str() + 12);
    }
  }
  return -1;
}

}  // namespace zt::testing
