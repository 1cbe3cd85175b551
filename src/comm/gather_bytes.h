// Variable-length byte strings gathered to one rank over point-to-point messages (a
// length, then the bytes), and a root's string broadcast to every rank. Used for the
// small metadata of collective operations (checkpoint piece lists, error messages),
// never for tensors.
#pragma once

#include <string>
#include <vector>

#include "comm/process_group.h"
#include "core/status.h"

namespace zt {

// Collective. On `root`: every rank's string, by rank. Elsewhere: empty.
StatusOr<std::vector<std::string>> gather_bytes(ProcessGroup* group, const std::string& mine, int root);

// Collective. Every rank returns root's `value`.
StatusOr<std::string> broadcast_bytes(ProcessGroup* group, const std::string& value, int root);

}  // namespace zt
