// mkdir -p and existence checks.
#include "io/filesystem.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>

namespace zt {

Status make_dirs(const std::string& path) {
  std::string partial;
  for (size_t i = 0; i <= path.size(); ++i) {
    if (i == path.size() || path[i] == '/') {
      if (!partial.empty() && ::mkdir(partial.c_str(), 0755) != 0 && errno != EEXIST) {
        return Status::IOError("cannot create directory " + partial + ": " + std::strerror(errno));
      }
    }
    if (i < path.size()) partial += path[i];
  }
  return Status::OK();
}

bool file_exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

}  // namespace zt
