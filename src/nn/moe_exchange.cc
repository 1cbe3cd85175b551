// The routed experts on the compact layout, and expert parallelism's token exchange
// around them (nn/moe_exchange.h).
#include "nn/moe_exchange.h"

#include <string>

namespace zt {

namespace {

constexpr size_t kF = sizeof(float);

// Expert j's part of the saved activations: its rows of each (rows, I) array.
MoeExpertActs rows_of(const MoeExpertActs& a, int64_t row, int I) {
  const int64_t at = row * I;
  return MoeExpertActs{a.h_in + at, a.h_up == nullptr ? nullptr : a.h_up + at, a.act + at};
}

MoeExpertShape one_expert(const MoeLocalExperts& x, int64_t rows) { return MoeExpertShape{1, rows, x.C, x.I, x.swiglu}; }

// The headers: each peer learns this rank's filled rows for the peer's experts, in one
// all-to-all of E/ep int64 per pair.
StatusOr<MoeExchange> exchange_layout(const MoeLocalExperts& x, const std::vector<int64_t>& fill) {
  const int ep = x.ep->size(), L = x.local;
  std::vector<int64_t> recv(fill.size());
  const std::vector<size_t> bytes(static_cast<size_t>(ep), static_cast<size_t>(L) * sizeof(int64_t));
  ZT_RETURN_IF_ERROR(x.ep->all_to_all(fill.data(), bytes, recv.data(), bytes)->wait());
  MoeExchange ex;
  for (int p = 0; p < ep; ++p) {
    const int64_t* h = recv.data() + static_cast<size_t>(p) * L;
    ex.fill.emplace_back(h, h + L);
    ex.row.push_back(ex.rows);
    for (int j = 0; j < L; ++j) ex.rows += h[j];
  }
  return ex;
}

// Bytes per peer of the owners' side (their segments) and of this rank's side (the rows of
// each peer's experts).
std::vector<size_t> owner_bytes(const MoeLocalExperts& x, const MoeExchange& ex) {
  std::vector<size_t> b;
  for (size_t p = 0; p < ex.row.size(); ++p) {
    const int64_t end = p + 1 < ex.row.size() ? ex.row[p + 1] : ex.rows;
    b.push_back(static_cast<size_t>((end - ex.row[p]) * x.C) * kF);
  }
  return b;
}
std::vector<size_t> sender_bytes(const MoeLocalExperts& x, const MoeCompact& layout) {
  std::vector<size_t> b;
  for (int q = 0; q < x.ep->size(); ++q) {
    const int64_t rows = layout.offset[static_cast<size_t>((q + 1) * x.local)] - layout.offset[static_cast<size_t>(q * x.local)];
    b.push_back(static_cast<size_t>(rows * x.C) * kF);
  }
  return b;
}

// Where each peer's rows of each local expert start in the received buffer: [p][j].
std::vector<std::vector<int64_t>> segment_offsets(const MoeExchange& ex) {
  std::vector<std::vector<int64_t>> off;
  for (size_t p = 0; p < ex.row.size(); ++p) {
    off.push_back({ex.row[p]});
    for (int64_t f : ex.fill[p]) off.back().push_back(off.back().back() + f);
  }
  return off;
}

// Expert j with weights w on its n rows from row `at`.
void expert_forward(const MoeLocalExperts& x, const MoeExpertWeights& w, int64_t n, int64_t at, float* out,
                    const MoeExpertActs& acts, const float* buf) {
  x.ops->experts_forward(out + at * x.C, rows_of(acts, at, x.I), buf + at * x.C, {w}, {n}, one_expert(x, n));
}
void expert_backward(const MoeLocalExperts& x, int j, const MoeExpertWeights& w, int64_t n, int64_t at, float* dbuf,
                     const float* dout, const MoeExpertActs& acts, const float* buf, float* scratch) {
  x.ops->experts_backward(dbuf + at * x.C, {x.grads[static_cast<size_t>(j)]}, dout + at * x.C, rows_of(acts, at, x.I),
                          buf + at * x.C, {w}, {n}, one_expert(x, n), scratch);
}

Status exchanged(const Status& s, const char* what) {
  if (s.ok()) return s;
  return Status(s.code(), std::string("expert parallelism: the all-to-all of ") + what + " failed: " + s.message());
}

}  // namespace

void moe_local_experts_forward(const MoeLocalExperts& x, float* out, const MoeExpertActs& acts, const float* buf,
                               const std::vector<int64_t>& fill, const std::vector<int64_t>& offset) {
  for (int j = 0; j < x.local; ++j) {
    if (fill[static_cast<size_t>(j)] == 0) continue;
    expert_forward(x, x.weights_of(j), fill[static_cast<size_t>(j)], offset[static_cast<size_t>(j)], out, acts, buf);
  }
}

void moe_local_experts_backward(const MoeLocalExperts& x, float* dbuf, const float* dout, const MoeExpertActs& acts,
                                const float* buf, const std::vector<int64_t>& fill, const std::vector<int64_t>& offset,
                                float* scratch) {
  for (int j = 0; j < x.local; ++j) {
    if (fill[static_cast<size_t>(j)] == 0) continue;
    expert_backward(x, j, x.weights_of(j), fill[static_cast<size_t>(j)], offset[static_cast<size_t>(j)], dbuf, dout,
                    acts, buf, scratch);
  }
}

StatusOr<MoeExchange> moe_ep_forward(const MoeLocalExperts& x, const float* send, const MoeCompact& layout,
                                     float* recv, const MoeExpertActs& acts, float* eout, float* out) {
  ZT_ASSIGN_OR_RETURN(MoeExchange ex, exchange_layout(x, layout.fill));
  const std::vector<size_t> mine = sender_bytes(x, layout), theirs = owner_bytes(x, ex);
  ZT_RETURN_IF_ERROR(exchanged(x.ep->all_to_all(send, mine, recv, theirs)->wait(), "tokens to their experts"));
  const std::vector<std::vector<int64_t>> at = segment_offsets(ex);
  for (int j = 0; j < x.local; ++j) {  // each expert once, on every peer's rows in peer order
    const MoeExpertWeights w = x.weights_of(j);
    for (size_t p = 0; p < at.size(); ++p) {
      const int64_t n = ex.fill[p][static_cast<size_t>(j)];
      if (n > 0) expert_forward(x, w, n, at[p][static_cast<size_t>(j)], eout, acts, recv);
    }
  }
  ZT_RETURN_IF_ERROR(exchanged(x.ep->all_to_all(eout, theirs, out, mine)->wait(), "the experts' outputs"));
  return ex;
}

Status moe_ep_backward(const MoeLocalExperts& x, const MoeExchange& ex, const MoeCompact& layout, float* dout,
                       float* drecv, float* dbuf, const MoeExpertActs& acts, const float* recv, float* scratch) {
  const std::vector<size_t> mine = sender_bytes(x, layout), theirs = owner_bytes(x, ex);
  ZT_RETURN_IF_ERROR(exchanged(x.ep->all_to_all(dout, mine, drecv, theirs)->wait(), "the outputs' gradients"));
  const std::vector<std::vector<int64_t>> at = segment_offsets(ex);
  for (int j = 0; j < x.local; ++j) {  // the weight gradients add the peers' parts in peer order
    const MoeExpertWeights w = x.weights_of(j);
    for (size_t p = 0; p < at.size(); ++p) {
      const int64_t n = ex.fill[p][static_cast<size_t>(j)];
      if (n > 0) expert_backward(x, j, w, n, at[p][static_cast<size_t>(j)], dbuf, drecv, acts, recv, scratch);
    }
  }
  return exchanged(x.ep->all_to_all(dbuf, theirs, dout, mine)->wait(), "the inputs' gradients");
}

}  // namespace zt
