// Small filesystem helpers shared by checkpoints, the CLI and the demo.
#pragma once

#include <string>

#include "core/status.h"

namespace zt {

// mkdir -p; IOError naming the directory that could not be created.
Status make_dirs(const std::string& path);
bool file_exists(const std::string& path);  // a regular file

}  // namespace zt
