// ProcessGroup::all_to_all's default: zerotrain's own exchange over send and receive (see
// process_group.h). Every pair's send and receive are posted at once, so no order of peers
// can deadlock; one Work waits for them all and reports the first failure.
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "comm/process_group.h"
#include "core/check.h"

namespace zt {

namespace {

class AllWork final : public Work {
 public:
  explicit AllWork(std::vector<WorkHandle> parts) : parts_(std::move(parts)) {}
  Status wait() override {
    Status first;
    for (const WorkHandle& w : parts_) {
      Status s = w->wait();
      if (first.ok() && !s.ok()) first = s;
    }
    return first;
  }
  bool completed() const override {
    for (const WorkHandle& w : parts_) {
      if (!w->completed()) return false;
    }
    return true;
  }

 private:
  std::vector<WorkHandle> parts_;
};

}  // namespace

WorkHandle ProcessGroup::all_to_all(const void* send, const std::vector<size_t>& send_bytes, void* recv,
                                    const std::vector<size_t>& recv_bytes) {
  const int n = size(), me = rank();
  ZT_CHECK(static_cast<int>(send_bytes.size()) == n && static_cast<int>(recv_bytes.size()) == n,
           "all_to_all: %zu send and %zu receive segments for %d ranks", send_bytes.size(), recv_bytes.size(), n);
  std::vector<WorkHandle> parts;
  const auto* in = static_cast<const unsigned char*>(send);
  auto* out = static_cast<unsigned char*>(recv);
  size_t so = 0, ro = 0;
  std::vector<size_t> send_at(static_cast<size_t>(n)), recv_at(static_cast<size_t>(n));
  for (int r = 0; r < n; ++r) {
    send_at[static_cast<size_t>(r)] = so;
    recv_at[static_cast<size_t>(r)] = ro;
    so += send_bytes[static_cast<size_t>(r)];
    ro += recv_bytes[static_cast<size_t>(r)];
  }
  for (int step = 0; step < n; ++step) {  // peers in ring order from this rank: each pair meets early
    const int to = (me + step) % n, from = (me - step + n) % n;
    const size_t rb = recv_bytes[static_cast<size_t>(from)], sb = send_bytes[static_cast<size_t>(to)];
    if (rb > 0) parts.push_back(this->recv(out + recv_at[static_cast<size_t>(from)], rb, from, kAllToAllTag));
    if (sb > 0) parts.push_back(this->send(in + send_at[static_cast<size_t>(to)], sb, to, kAllToAllTag));
  }
  return std::make_shared<AllWork>(std::move(parts));
}

}  // namespace zt
