// bind_symbol: one entry of a table of a dlopen'ed library's functions (cuBLASLt, NCCL),
// looked up by name; the first name missing is kept for the error that names it.
// Header-only; thread-safety: as dlsym.
#pragma once

#include <dlfcn.h>

#include <string>

namespace zt {

template <class F>
bool bind_symbol(void* lib, const char* name, F* out, std::string* missing) {
  *out = reinterpret_cast<F>(dlsym(lib, name));
  if (*out == nullptr && missing->empty()) *missing = name;
  return *out != nullptr;
}

}  // namespace zt
