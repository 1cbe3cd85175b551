// host_name (host_name.h).
#include "core/host_name.h"

#include <unistd.h>

namespace zt {

std::string host_name() {
  char name[256] = {};
  if (::gethostname(name, sizeof(name) - 1) != 0 || name[0] == '\0') return "localhost";
  return name;
}

}  // namespace zt
