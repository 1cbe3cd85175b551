// This machine's host name (gethostname), for telling ranks' hosts apart and naming files.
// Errors: none; "localhost" when the system gives no name.
// Thread-safety: safe.
#pragma once

#include <string>

namespace zt {

std::string host_name();

}  // namespace zt
