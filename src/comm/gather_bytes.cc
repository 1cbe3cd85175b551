// gather_bytes / broadcast_bytes over send, recv and broadcast.
#include "comm/gather_bytes.h"

#include <cstdint>

namespace zt {

namespace {

constexpr int kTagLength = 9101;
constexpr int kTagBytes = 9102;

}  // namespace

StatusOr<std::vector<std::string>> gather_bytes(ProcessGroup* group, const std::string& mine, int root) {
  std::vector<std::string> out;
  if (group->rank() != root) {
    uint64_t n = mine.size();
    ZT_RETURN_IF_ERROR(group->send(&n, sizeof(n), root, kTagLength)->wait());
    if (n > 0) ZT_RETURN_IF_ERROR(group->send(mine.data(), mine.size(), root, kTagBytes)->wait());
    return out;
  }
  out.resize(static_cast<size_t>(group->size()));
  out[static_cast<size_t>(root)] = mine;
  for (int r = 0; r < group->size(); ++r) {
    if (r == root) continue;
    uint64_t n = 0;
    ZT_RETURN_IF_ERROR(group->recv(&n, sizeof(n), r, kTagLength)->wait());
    if (n > (uint64_t{1} << 32)) return Status::Internal("gather_bytes: rank " + std::to_string(r) + " sent a length of " + std::to_string(n));
    std::string& s = out[static_cast<size_t>(r)];
    s.resize(static_cast<size_t>(n));
    if (n > 0) ZT_RETURN_IF_ERROR(group->recv(s.data(), s.size(), r, kTagBytes)->wait());
  }
  return out;
}

StatusOr<std::string> broadcast_bytes(ProcessGroup* group, const std::string& value, int root) {
  uint64_t n = value.size();
  ZT_RETURN_IF_ERROR(group->broadcast(&n, sizeof(n), root)->wait());
  std::string out = group->rank() == root ? value : std::string(static_cast<size_t>(n), '\0');
  if (n > 0) ZT_RETURN_IF_ERROR(group->broadcast(out.data(), out.size(), root)->wait());
  return out;
}

}  // namespace zt
