// ZT_CHECK: internal invariants. A failed check is a bug in zerotrain, never a user
// error, so it aborts at once with file:line and a printf-style message (ggml's
// GGML_ASSERT, llm.c's *Check macros). User-facing failures return Status instead.
#pragma once

#include <cstdio>
#include <cstdlib>

namespace zt {
[[noreturn]] void check_failed(const char* file, int line, const char* cond, const char* fmt, ...)
    __attribute__((format(printf, 4, 5)));
}  // namespace zt

#define ZT_CHECK(cond, ...)                                          \
  do {                                                               \
    if (__builtin_expect(!(cond), 0)) {                              \
      ::zt::check_failed(__FILE__, __LINE__, #cond, __VA_ARGS__);    \
    }                                                                \
  } while (0)
