// The switch of the table profilers (ZT_CPU_PROFILE, ZT_CUDA_PROFILE): whether the variable
// is "1", and if so `report` registered to run when the process ends, whether it ends with
// exit (a library user) or quick_exit (the zerotrain command, cli/main.cc).
// Thread-safety: call once, from a function-local static's initializer.
#pragma once

#include <cstdlib>
#include <cstring>

namespace zt {

inline bool profile_requested_by(const char* variable, void (*report)()) {
  const char* v = std::getenv(variable);
  const bool yes = v != nullptr && std::strcmp(v, "1") == 0;
  if (yes) {
    std::atexit(report);
    std::at_quick_exit(report);
  }
  return yes;
}

}  // namespace zt
