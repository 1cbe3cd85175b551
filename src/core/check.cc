// check_failed: prints the failed invariant and aborts the process.
#include "core/check.h"

#include <cstdarg>

namespace zt {

void check_failed(const char* file, int line, const char* cond, const char* fmt, ...) {
  std::fflush(stdout);
  std::fprintf(stderr, "zerotrain: internal check failed at %s:%d: %s\n  ", file, line, cond);
  va_list args;
  va_start(args, fmt);
  std::vfprintf(stderr, fmt, args);
  va_end(args);
  std::fprintf(stderr, "\n");
  std::fflush(stderr);
  std::abort();
}

}  // namespace zt
