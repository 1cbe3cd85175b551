// Expert parallelism's token exchange around an MoE block's experts (nn/moe_exchange.h).
#include "nn/moe_exchange.h"

#include <string>

namespace zt {

namespace {

constexpr size_t kF = sizeof(float);

// The headers: each peer learns this rank's capacity and its filled rows for the peer's
// experts, in one all-to-all of (1 + local) int64 per pair.
StatusOr<MoeExchange> exchange_layout(const MoeLocalExperts& x, int64_t cap, const std::vector<int64_t>& fill) {
  const int ep = x.ep->size(), L = x.local;
  const size_t per = static_cast<size_t>(L) + 1;
  std::vector<int64_t> send(per * static_cast<size_t>(ep)), recv(send.size());
  for (int q = 0; q < ep; ++q) {
    send[per * static_cast<size_t>(q)] = cap;
    for (int j = 0; j < L; ++j) send[per * static_cast<size_t>(q) + 1 + static_cast<size_t>(j)] = fill[static_cast<size_t>(q * L + j)];
  }
  const std::vector<size_t> bytes(static_cast<size_t>(ep), per * sizeof(int64_t));
  ZT_RETURN_IF_ERROR(x.ep->all_to_all(send.data(), bytes, recv.data(), bytes)->wait());
  MoeExchange ex;
  for (int p = 0; p < ep; ++p) {
    const int64_t* h = recv.data() + per * static_cast<size_t>(p);
    ex.capacity.push_back(h[0]);
    ex.fill.emplace_back(h + 1, h + per);
    ex.row.push_back(ex.rows);
    ex.rows += L * h[0];
  }
  return ex;
}

// Bytes per peer of the owners' side (their segments) and of this rank's side (E/ep x cap
// rows to each peer).
std::vector<size_t> owner_bytes(const MoeLocalExperts& x, const MoeExchange& ex) {
  std::vector<size_t> b;
  for (int64_t c : ex.capacity) b.push_back(static_cast<size_t>(x.local * c * x.C) * kF);
  return b;
}
std::vector<size_t> sender_bytes(const MoeLocalExperts& x, int64_t cap) {
  return std::vector<size_t>(static_cast<size_t>(x.ep->size()), static_cast<size_t>(x.local * cap * x.C) * kF);
}

MoeExpertShape segment_shape(const MoeLocalExperts& x, const MoeExchange& ex, int p) {
  return MoeExpertShape{x.local, ex.capacity[static_cast<size_t>(p)], x.C, x.I, x.swiglu};
}

// Peer p's part of the saved activations: its rows of each (rows, I) array.
MoeExpertActs segment_acts(const MoeLocalExperts& x, const MoeExpertActs& a, int64_t row) {
  const int64_t at = row * x.I;
  return MoeExpertActs{a.h_in + at, a.h_up == nullptr ? nullptr : a.h_up + at, a.act + at};
}

Status exchanged(const Status& s, const char* what) {
  if (s.ok()) return s;
  return Status(s.code(), std::string("expert parallelism: the all-to-all of ") + what + " failed: " + s.message());
}

}  // namespace

StatusOr<MoeExchange> moe_ep_forward(const MoeLocalExperts& x, const float* send, int64_t cap,
                                     const std::vector<int64_t>& fill, float* recv, const MoeExpertActs& acts,
                                     float* eout, float* out) {
  ZT_ASSIGN_OR_RETURN(MoeExchange ex, exchange_layout(x, cap, fill));
  const std::vector<size_t> mine = sender_bytes(x, cap), theirs = owner_bytes(x, ex);
  ZT_RETURN_IF_ERROR(exchanged(x.ep->all_to_all(send, mine, recv, theirs)->wait(), "tokens to their experts"));
  for (int p = 0; p < x.ep->size(); ++p) {
    const int64_t row = ex.row[static_cast<size_t>(p)];
    x.ops->experts_forward(eout + row * x.C, segment_acts(x, acts, row), recv + row * x.C, x.weights,
                           ex.fill[static_cast<size_t>(p)], segment_shape(x, ex, p));
  }
  ZT_RETURN_IF_ERROR(exchanged(x.ep->all_to_all(eout, theirs, out, mine)->wait(), "the experts' outputs"));
  return ex;
}

Status moe_ep_backward(const MoeLocalExperts& x, const MoeExchange& ex, int64_t cap, float* dout, float* drecv,
                       float* dbuf, const MoeExpertActs& acts, const float* recv, float* scratch) {
  const std::vector<size_t> mine = sender_bytes(x, cap), theirs = owner_bytes(x, ex);
  ZT_RETURN_IF_ERROR(exchanged(x.ep->all_to_all(dout, mine, drecv, theirs)->wait(), "the outputs' gradients"));
  for (int p = 0; p < x.ep->size(); ++p) {
    const int64_t row = ex.row[static_cast<size_t>(p)];
    x.ops->experts_backward(dbuf + row * x.C, x.grads, drecv + row * x.C, segment_acts(x, acts, row),
                            recv + row * x.C, x.weights, ex.fill[static_cast<size_t>(p)], segment_shape(x, ex, p),
                            scratch);
  }
  return exchanged(x.ep->all_to_all(dbuf, theirs, dout, mine)->wait(), "the inputs' gradients");
}

}  // namespace zt
