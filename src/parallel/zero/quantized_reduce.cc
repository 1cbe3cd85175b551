// qgZ: the levels' plans, and their all-to-alls run one after the other (see quantized_reduce.h).
#include "parallel/zero/quantized_reduce.h"

#include <algorithm>
#include <memory>
#include <utility>

#include "core/check.h"

namespace zt {

namespace {

size_t bytes_of(const QgzCodec& codec, const std::vector<ElementRange>& segs) {  // at planning only
  size_t b = 0;
  for (const ElementRange& s : segs) b += codec.wire_bytes(s);
  return b;
}

// The levels run in turn: level i + 1 is encoded from what level i decoded into the bucket.
class QgzWork final : public Work {
 public:
  QgzWork(const QgzCodec& codec, const std::vector<QgzLevel>& levels, float* bucket)
      : codec_(codec), levels_(levels), bucket_(bucket) {}

  void start_level() {
    const QgzLevel& lv = levels_[next_];
    size_t sent = 0, received = 0;
    for (size_t r = 0; r < lv.send.size(); ++r) {
      sent += lv.send_bytes[r];
      received += lv.recv_bytes[r];
    }
    send_.assign(sent, 0);
    recv_.assign(received, 0);
    uint8_t* out = send_.data();
    for (const std::vector<ElementRange>& segs : lv.send) {
      for (const ElementRange& s : segs) out += codec_.encode(bucket_, s, out);
    }
    inner_ = lv.group->all_to_all(send_.data(), lv.send_bytes, recv_.data(), lv.recv_bytes);
  }

  // The senders' copies of each received segment, added in group-rank order.
  void finish_level() {
    const QgzLevel& lv = levels_[next_];
    const uint8_t* in = recv_.data();
    bool first = true;
    for (size_t r = 0; r < lv.send.size(); ++r) {
      if (!lv.from[r]) continue;
      for (const ElementRange& s : lv.recv) in += codec_.decode(in, s, bucket_, !first);
      first = false;
    }
    ++next_;
  }

  Status wait() override {
    while (inner_ != nullptr) {
      const Status s = inner_->wait();
      inner_ = nullptr;
      ZT_RETURN_IF_ERROR(s);
      finish_level();
      if (next_ < levels_.size()) start_level();
    }
    send_ = {};
    recv_ = {};
    return Status::OK();
  }
  bool completed() const override { return inner_ == nullptr; }

 private:
  const QgzCodec& codec_;
  const std::vector<QgzLevel>& levels_;
  float* bucket_;
  size_t next_ = 0;
  std::vector<uint8_t> send_, recv_;
  WorkHandle inner_;
};

}  // namespace

QgzReduceScatter::QgzReduceScatter(const ParamTable& table, ElementRange range, const std::vector<size_t>& counts,
                                   ProcessGroup* dp, ProcessGroup* node)
    : codec_(table, range, static_cast<int>(counts.size())) {
  ZT_CHECK(static_cast<int>(counts.size()) == dp->size(), "qgZ: %zu segments for %d ranks", counts.size(), dp->size());
  const bool two = node != nullptr && node->size() > 1 && node->size() < dp->size();
  ZT_CHECK(!two || (dp->size() % node->size() == 0 && node->rank() == dp->rank() % node->size()),
           "qgZ: the node group must be consecutive dp ranks of one size");
  plan(counts, dp->rank(), two ? node->size() : 1);
  if (two) levels_[0].group = node;
  levels_.back().group = dp;
}

QgzReduceScatter::QgzReduceScatter(const ParamTable& table, ElementRange range, const std::vector<size_t>& counts,
                                   int dp_rank, int node_size)
    : codec_(table, range, static_cast<int>(counts.size())) {
  const int dp = static_cast<int>(counts.size());
  plan(counts, dp_rank, node_size > 1 && node_size < dp ? node_size : 1);
}

void QgzReduceScatter::plan(const std::vector<size_t>& counts, int me, int L) {
  const int dp = static_cast<int>(counts.size()), N = dp / L, l = me % L;
  std::vector<ElementRange> seg(counts.size());
  size_t at = codec_.range().begin;
  for (size_t d = 0; d < counts.size(); ++d) {
    seg[d] = ElementRange{at, at + counts[d]};
    at += counts[d];
  }
  ZT_CHECK(at == codec_.range().end, "qgZ: the segments do not cover the bucket");
  if (L > 1) {  // within the node: to local peer j, the segments of ranks (n', j)
    QgzLevel intra;
    intra.send.resize(static_cast<size_t>(L));
    intra.from.assign(static_cast<size_t>(L), true);
    for (int j = 0; j < L; ++j) {
      for (int m = 0; m < N; ++m) intra.send[static_cast<size_t>(j)].push_back(seg[static_cast<size_t>(m * L + j)]);
    }
    intra.recv = intra.send[static_cast<size_t>(l)];
    levels_.push_back(std::move(intra));
  }
  QgzLevel across;  // over dp: rank d gets its segment from the ranks of its local index
  across.send.resize(static_cast<size_t>(dp));
  across.from.assign(static_cast<size_t>(dp), false);
  for (int d = 0; d < dp; ++d) {
    if (d % L != l) continue;
    across.send[static_cast<size_t>(d)].push_back(seg[static_cast<size_t>(d)]);
    across.from[static_cast<size_t>(d)] = true;
  }
  across.recv = {seg[static_cast<size_t>(me)]};
  levels_.push_back(std::move(across));
  size_levels();
}

void QgzReduceScatter::size_levels() {
  for (QgzLevel& lv : levels_) {
    const size_t each = bytes_of(codec_, lv.recv);
    for (size_t r = 0; r < lv.send.size(); ++r) {
      lv.send_bytes.push_back(bytes_of(codec_, lv.send[r]));
      lv.recv_bytes.push_back(lv.from[r] ? each : 0);
      buffer_bytes_ += lv.send_bytes.back() + lv.recv_bytes.back();
    }
  }
}

WorkHandle QgzReduceScatter::start(float* bucket) const {
  auto work = std::make_shared<QgzWork>(codec_, levels_, bucket);
  work->start_level();
  return work;
}

}  // namespace zt
