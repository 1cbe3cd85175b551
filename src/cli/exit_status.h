// Exit statuses of the zerotrain command and the one place errors reach stderr.
#pragma once

#include <cstdio>

#include "core/status.h"

namespace zt {

constexpr int kExitOk = 0;
constexpr int kExitFailure = 1;   // something failed while running
constexpr int kExitBadInput = 2;  // bad configuration, arguments or input files: nothing was run

// Prints "zerotrain: <message>" to stderr (after flushing stdout) and returns `code`.
inline int report_error(const Status& s, int code) {
  std::fflush(stdout);
  std::fprintf(stderr, "zerotrain: %s\n", s.message().c_str());
  return code;
}

}  // namespace zt
