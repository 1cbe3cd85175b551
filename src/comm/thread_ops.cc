// The thread backend's collective, send and receive tasks (see thread_ops.h).
#include "comm/thread_ops.h"

#include <algorithm>
#include <cstring>

#include "comm/half_sum.h"

namespace zt {

namespace {

std::string describe_call(CommOp op, CommDType dtype, size_t count, const std::vector<size_t>& counts, int root) {
  std::string s = comm_op_name(op);
  switch (op) {
    case CommOp::kAllReduce: return s + " of " + std::to_string(count) + " x " + comm_dtype_name(dtype);
    case CommOp::kBroadcast: return s + " of " + std::to_string(count) + " B from root " + std::to_string(root);
    case CommOp::kReduceScatter:
    case CommOp::kAllGather: {
      s += " of segments [";
      for (size_t i = 0; i < counts.size(); ++i) s += (i ? ", " : "") + std::to_string(counts[i]);
      return s + "]";
    }
    default: return s;
  }
}

// Sum in rank order 0..n-1 of elements [lo, hi) of every buffer into out.
template <typename T>
void sum_in_rank_order(const std::vector<void*>& bufs, size_t lo, size_t hi, T* out) {
  const T* b0 = static_cast<const T*>(bufs[0]);
  for (size_t i = lo; i < hi; ++i) out[i] = b0[i];
  for (size_t r = 1; r < bufs.size(); ++r) {
    const T* b = static_cast<const T*>(bufs[r]);
    for (size_t i = lo; i < hi; ++i) out[i] += b[i];
  }
}

// The same for 16-bit data, each addition by comm/half_sum.h's rule.
void half_sum_in_rank_order(CommDType dtype, const std::vector<void*>& bufs, size_t lo, size_t hi, uint16_t* out) {
  std::memcpy(out + lo, static_cast<const uint16_t*>(bufs[0]) + lo, (hi - lo) * sizeof(uint16_t));
  for (size_t r = 1; r < bufs.size(); ++r) half_sum_into(dtype, out + lo, static_cast<const uint16_t*>(bufs[r]) + lo, hi - lo);
}

void sum_dtype(CommDType dtype, const std::vector<void*>& bufs, size_t lo, size_t hi, void* out) {
  switch (dtype) {
    case CommDType::kF32: return sum_in_rank_order(bufs, lo, hi, static_cast<float*>(out));
    case CommDType::kF64: return sum_in_rank_order(bufs, lo, hi, static_cast<double*>(out));
    case CommDType::kI64: return sum_in_rank_order(bufs, lo, hi, static_cast<int64_t*>(out));
    case CommDType::kBF16:
    case CommDType::kF16: return half_sum_in_rank_order(dtype, bufs, lo, hi, static_cast<uint16_t*>(out));
  }
}

class CollectiveTask final : public CommTask {
 public:
  CollectiveTask(std::shared_ptr<ThreadGroupShared> shared, int rank, int64_t coll_seq, ThreadCollective call)
      : shared_(std::move(shared)), rank_(rank), seq_(coll_seq), call_(std::move(call)) {}

  Status start(const OpInfo& info) override {
    std::lock_guard<std::mutex> lock(shared_->mu);
    std::shared_ptr<ThreadSlot>& slot = shared_->slots[seq_];
    if (!slot) {
      slot = std::make_shared<ThreadSlot>();
      slot->op = call_.op;
      slot->dtype = call_.dtype;
      slot->count = call_.count;
      slot->counts = call_.counts;
      slot->root = call_.root;
      slot->first_rank = rank_;
      slot->bufs.assign(static_cast<size_t>(shared_->size), nullptr);
      if (call_.op == CommOp::kAllReduce) slot->result.resize(call_.count * comm_dtype_size(call_.dtype));
    } else if (slot->op != call_.op || slot->dtype != call_.dtype || slot->count != call_.count ||
               slot->counts != call_.counts || slot->root != call_.root) {
      return Status::Internal(describe_op(info) + ": collective mismatch: rank " + std::to_string(rank_) +
                              " issued " + describe_call(call_.op, call_.dtype, call_.count, call_.counts, call_.root) +
                              " but rank " + std::to_string(slot->first_rank) + " issued " +
                              describe_call(slot->op, slot->dtype, slot->count, slot->counts, slot->root) +
                              " as collective " + std::to_string(seq_) + " of the group");
    }
    slot->bufs[rank_] = call_.data;
    slot->arrived += 1;
    slot_ = slot;
    return Status::OK();
  }

  Status progress(bool* done, bool* progressed) override {
    std::lock_guard<std::mutex> lock(shared_->mu);
    ThreadSlot& s = *slot_;
    const int n = shared_->size;
    if (s.abandoned) return Status::OK();  // a member gave up: wait for our own deadline
    if (phase_ == 0) {
      if (s.arrived < n) return Status::OK();
      read_peers(s);
      s.computed += 1;
      phase_ = 1;
      *progressed = true;
    }
    if (s.computed < n) return Status::OK();
    if (call_.op == CommOp::kAllReduce && !s.result.empty()) {
      std::memcpy(call_.data, s.result.data(), s.result.size());
    }
    s.left += 1;
    if (s.left == n) shared_->slots.erase(seq_);
    *done = true;
    return Status::OK();
  }

  void cancel() override {
    std::lock_guard<std::mutex> lock(shared_->mu);
    if (!slot_) return;
    slot_->abandoned = true;
    slot_->bufs[rank_] = nullptr;
  }

 private:
  // Phase 1: this rank's share of the work; reads peers' buffers, writes only what no
  // peer reads (its own segment, non-owned segments of its own buffer, the shared result).
  void read_peers(ThreadSlot& s) {
    const size_t n = s.bufs.size();
    const size_t r = static_cast<size_t>(rank_);
    switch (call_.op) {
      case CommOp::kAllReduce: {
        const size_t lo = s.count * r / n, hi = s.count * (r + 1) / n;
        if (hi > lo) sum_dtype(s.dtype, s.bufs, lo, hi, s.result.data());
        break;
      }
      case CommOp::kReduceScatter: {  // f32, or 16-bit (reduce_scatter_16)
        const size_t es = comm_dtype_size(s.dtype);
        size_t off = 0;
        for (size_t q = 0; q < r; ++q) off += s.counts[q];
        const size_t len = s.counts[r];
        if (len == 0) break;
        std::vector<void*> segs(n);
        for (size_t q = 0; q < n; ++q) segs[q] = static_cast<char*>(s.bufs[q]) + off * es;
        std::vector<char> sum(len * es);  // our own segment is an input too: sum aside, then copy
        sum_dtype(s.dtype, segs, 0, len, sum.data());
        std::memcpy(static_cast<char*>(call_.data) + off * es, sum.data(), len * es);
        break;
      }
      case CommOp::kAllGather: {
        size_t off = 0;
        for (size_t q = 0; q < n; ++q) {
          if (q != r && s.counts[q] > 0) {
            std::memcpy(static_cast<float*>(call_.data) + off, static_cast<const float*>(s.bufs[q]) + off,
                        s.counts[q] * sizeof(float));
          }
          off += s.counts[q];
        }
        break;
      }
      case CommOp::kBroadcast:
        if (rank_ != s.root && s.count > 0) std::memcpy(call_.data, s.bufs[s.root], s.count);
        break;
      default:
        break;
    }
  }

  std::shared_ptr<ThreadGroupShared> shared_;
  int rank_;
  int64_t seq_;
  ThreadCollective call_;
  std::shared_ptr<ThreadSlot> slot_;
  int phase_ = 0;
};

class SendTask final : public CommTask {
 public:
  SendTask(std::shared_ptr<ThreadGroupShared> shared, std::tuple<int, int, int> key, const void* data, size_t bytes)
      : shared_(std::move(shared)), key_(key) {
    msg_ = std::make_shared<ThreadMessage>();
    msg_->data = data;
    msg_->bytes = bytes;
  }
  Status start(const OpInfo& info) override {
    info_ = info;
    std::lock_guard<std::mutex> lock(shared_->mu);
    shared_->channels[key_].sends.push_back(msg_);
    return Status::OK();
  }
  Status progress(bool* done, bool*) override {
    std::lock_guard<std::mutex> lock(shared_->mu);
    if (!msg_->done) return Status::OK();
    *done = true;
    return msg_->error.empty() ? Status::OK() : Status::Internal(describe_op(info_) + ": " + msg_->error);
  }
  void cancel() override {
    std::lock_guard<std::mutex> lock(shared_->mu);
    auto& q = shared_->channels[key_].sends;
    q.erase(std::remove(q.begin(), q.end(), msg_), q.end());
  }

 private:
  std::shared_ptr<ThreadGroupShared> shared_;
  std::tuple<int, int, int> key_;
  std::shared_ptr<ThreadMessage> msg_;
  OpInfo info_;
};

class RecvTask final : public CommTask {
 public:
  RecvTask(std::shared_ptr<ThreadGroupShared> shared, std::tuple<int, int, int> key, void* data, size_t bytes)
      : shared_(std::move(shared)), key_(key), data_(data), bytes_(bytes) {}
  Status start(const OpInfo& info) override {
    info_ = info;
    std::lock_guard<std::mutex> lock(shared_->mu);
    shared_->channels[key_].recvs.push_back(this);
    return Status::OK();
  }
  Status progress(bool* done, bool*) override {
    std::lock_guard<std::mutex> lock(shared_->mu);
    ThreadChannel& ch = shared_->channels[key_];
    if (ch.recvs.front() != this || ch.sends.empty()) return Status::OK();
    std::shared_ptr<ThreadMessage> msg = ch.sends.front();
    ch.sends.pop_front();
    ch.recvs.pop_front();
    msg->done = true;
    *done = true;
    if (msg->bytes != bytes_) {
      msg->error = "message of " + std::to_string(msg->bytes) + " B from rank " + std::to_string(std::get<0>(key_)) +
                   " to rank " + std::to_string(std::get<1>(key_)) + " (tag " + std::to_string(std::get<2>(key_)) +
                   ") met a receive of " + std::to_string(bytes_) + " B";
      return Status::Internal(describe_op(info_) + ": " + msg->error);
    }
    if (bytes_ > 0) std::memcpy(data_, msg->data, bytes_);
    return Status::OK();
  }
  void cancel() override {
    std::lock_guard<std::mutex> lock(shared_->mu);
    auto& q = shared_->channels[key_].recvs;
    q.erase(std::remove(q.begin(), q.end(), static_cast<const void*>(this)), q.end());
  }

 private:
  std::shared_ptr<ThreadGroupShared> shared_;
  std::tuple<int, int, int> key_;
  void* data_;
  size_t bytes_;
  OpInfo info_;
};

}  // namespace

std::unique_ptr<CommTask> make_thread_collective(std::shared_ptr<ThreadGroupShared> shared, int rank,
                                                 int64_t coll_seq, ThreadCollective call) {
  return std::make_unique<CollectiveTask>(std::move(shared), rank, coll_seq, std::move(call));
}

std::unique_ptr<CommTask> make_thread_send(std::shared_ptr<ThreadGroupShared> shared, int src, int dst, int tag,
                                           const void* data, size_t bytes) {
  return std::make_unique<SendTask>(std::move(shared), std::make_tuple(src, dst, tag), data, bytes);
}

std::unique_ptr<CommTask> make_thread_recv(std::shared_ptr<ThreadGroupShared> shared, int src, int dst, int tag,
                                           void* data, size_t bytes) {
  return std::make_unique<RecvTask>(std::move(shared), std::make_tuple(src, dst, tag), data, bytes);
}

}  // namespace zt
