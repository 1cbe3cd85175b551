// RingTask: the chunked, pipelined ring (see ring.h). The sends of the whole operation
// form one ordered list of units (step k, chunk c), the receives another; the left
// neighbour's send list is exactly this rank's receive list, in the same order, so one
// tag per operation suffices (MPI keeps messages between two ranks in order).
// Dependencies: send (k, c) waits for receive (k-1, c) to be done (same segment);
// a direct (all-gather) receive (k, c) into the buffer waits for the send (k-N+1, c) that
// reads the same chunk to complete, as MPI forbids touching a buffer under a pending send.
#include "comm/ring.h"

#include <algorithm>
#include <cstdint>
#include <deque>

#include "comm/half_sum.h"
#include "comm/mpi_call.h"

namespace zt {

namespace {

constexpr int kTemps = 2;            // chunk-sized temporaries (receives awaiting reduction)
constexpr size_t kRecvWindow = 2;    // receives posted ahead
constexpr size_t kSendWindow = 4;    // sends in flight (they need no temporaries)
constexpr size_t kMaxChunkElems = size_t{1} << 28;

// The element the ring moves and how two are added: fp32, or 16-bit bit patterns summed by
// comm/half_sum.h's rule (the format in `dtype`).
struct F32Wire {
  using T = float;
  static MPI_Datatype type() { return MPI_FLOAT; }
  static void add(CommDType, float* __restrict dst, const float* __restrict src, int n) {
    for (int i = 0; i < n; ++i) dst[i] += src[i];
  }
};
struct HalfWire {
  using T = uint16_t;
  static MPI_Datatype type() { return MPI_UINT16_T; }
  static void add(CommDType d, uint16_t* dst, const uint16_t* src, int n) {
    half_sum_into(d, dst, src, static_cast<size_t>(n));
  }
};

template <class W>
class RingTask final : public CommTask {
  using T = typename W::T;

 public:
  RingTask(RingPhase phase, T* data, std::vector<size_t> counts, const RingConfig& config, CommDType dtype)
      : data_(data), counts_(std::move(counts)), cfg_(config), dtype_(dtype), n_(config.size), r_(config.rank) {
    chunk_ = std::clamp<size_t>(cfg_.chunk_bytes / sizeof(T), 1, kMaxChunkElems);
    offsets_.assign(counts_.size() + 1, 0);
    for (size_t i = 0; i < counts_.size(); ++i) offsets_[i + 1] = offsets_[i] + counts_[i];
    k0_ = phase == RingPhase::kAllGather ? n_ - 1 : 0;
    k1_ = phase == RingPhase::kReduceScatter ? n_ - 1 : 2 * n_ - 2;
    if (n_ == 1) k1_ = k0_;
    send_base_.assign(static_cast<size_t>(k1_ - k0_) + 1, 0);
    recv_base_.assign(static_cast<size_t>(k1_ - k0_) + 1, 0);
    for (int k = k0_; k < k1_; ++k) {
      send_base_[k - k0_ + 1] = send_base_[k - k0_] + nchunks(send_seg(k));
      recv_base_[k - k0_ + 1] = recv_base_[k - k0_] + nchunks(recv_seg(k));
    }
    send_done_.assign(send_base_.back(), 0);
    recv_done_.assign(recv_base_.back(), 0);
  }

  Status start(const OpInfo& info) override {
    where_ = mpi_where(info, cfg_.group, r_, n_);
    bool needs_temps = false;
    size_t largest = 0;
    for (int k = k0_; k < k1_; ++k) {
      if (reduces(k) && nchunks(recv_seg(k)) > 0) needs_temps = true;
      largest = std::max(largest, counts_[recv_seg(k)]);
    }
    if (needs_temps) {
      for (auto& t : temps_) t.reset(new T[std::min(chunk_, largest)]);
    }
    send_cursor_ = first(true);
    recv_cursor_ = first(false);
    bool done = false, moved = false;
    return progress(&done, &moved);  // post the first receives and sends at once
  }

  Status progress(bool* done, bool* progressed) override {
    for (int round = 0; round < 8; ++round) {
      bool moved = false;
      ZT_RETURN_IF_ERROR(test_recvs(&moved));
      ZT_RETURN_IF_ERROR(post_sends(&moved));
      ZT_RETURN_IF_ERROR(post_recvs(&moved));
      ZT_RETURN_IF_ERROR(test_sends(&moved));
      if (!moved) break;
      *progressed = true;
    }
    *done = sends_completed_ == send_done_.size() && recvs_completed_ == recv_done_.size();
    return Status::OK();
  }

 private:
  struct Cursor {
    int k;
    size_t c;
  };
  struct Pending {
    size_t index;  // flat unit index
    int k;
    size_t c;
    int temp;  // temporary holding a received chunk, or -1 (sends, direct receives)
    MPI_Request request;
  };

  int mod(int x) const { return ((x % n_) + n_) % n_; }
  int send_seg(int k) const { return mod(r_ - k - 1); }
  int recv_seg(int k) const { return mod(r_ - k - 2); }
  bool reduces(int k) const { return k < n_ - 1; }
  size_t nchunks(int seg) const { return (counts_[seg] + chunk_ - 1) / chunk_; }
  int chunk_len(int seg, size_t c) const { return static_cast<int>(std::min(chunk_, counts_[seg] - c * chunk_)); }
  T* chunk_ptr(int seg, size_t c) const { return data_ + offsets_[seg] + c * chunk_; }
  size_t send_index(const Cursor& u) const { return send_base_[u.k - k0_] + u.c; }
  size_t recv_index(int k, size_t c) const { return recv_base_[k - k0_] + c; }

  Cursor skip_empty(Cursor u, bool send) const {
    while (u.k < k1_ && u.c >= nchunks(send ? send_seg(u.k) : recv_seg(u.k))) u = {u.k + 1, 0};
    return u;
  }
  Cursor first(bool send) const { return skip_empty({k0_, 0}, send); }
  Cursor next(Cursor u, bool send) const { return skip_empty({u.k, u.c + 1}, send); }

  Status post_sends(bool* moved) {
    while (send_cursor_.k < k1_ && sends_.size() < kSendWindow) {
      const Cursor u = send_cursor_;
      if (u.k > k0_ && !recv_done_[recv_index(u.k - 1, u.c)]) break;
      const int seg = send_seg(u.k);
      Pending p{send_index(u), u.k, u.c, -1, MPI_REQUEST_NULL};
      ZT_RETURN_IF_ERROR(mpi_check(MPI_Isend(chunk_ptr(seg, u.c), chunk_len(seg, u.c), W::type(), mod(r_ + 1),
                                             cfg_.tag, cfg_.comm, &p.request),
                                   "MPI_Isend", where_));
      sends_.push_back(p);
      send_cursor_ = next(u, true);
      *moved = true;
    }
    return Status::OK();
  }

  Status post_recvs(bool* moved) {
    while (recv_cursor_.k < k1_ && recvs_.size() < kRecvWindow) {
      const Cursor u = recv_cursor_;
      const int seg = recv_seg(u.k);
      int temp = -1;
      if (reduces(u.k)) {
        for (int t = 0; t < kTemps; ++t) {
          if (!temp_busy_[t]) temp = t;
        }
        if (temp < 0) break;
      } else {
        const int ks = u.k - (n_ - 1);  // the earlier send that reads this chunk
        if (ks >= k0_ && !send_done_[send_index({ks, u.c})]) break;
      }
      T* dst = temp >= 0 ? temps_[temp].get() : chunk_ptr(seg, u.c);
      Pending p{recv_index(u.k, u.c), u.k, u.c, temp, MPI_REQUEST_NULL};
      ZT_RETURN_IF_ERROR(mpi_check(
          MPI_Irecv(dst, chunk_len(seg, u.c), W::type(), mod(r_ - 1), cfg_.tag, cfg_.comm, &p.request),
          "MPI_Irecv", where_));
      if (temp >= 0) temp_busy_[temp] = true;
      recvs_.push_back(p);
      recv_cursor_ = next(u, false);
      *moved = true;
    }
    return Status::OK();
  }

  Status test_recvs(bool* moved) {
    while (!recvs_.empty()) {
      Pending& p = recvs_.front();
      int flag = 0;
      ZT_RETURN_IF_ERROR(mpi_check(MPI_Test(&p.request, &flag, MPI_STATUS_IGNORE), "MPI_Test", where_));
      if (!flag) break;
      if (p.temp >= 0) {
        const int seg = recv_seg(p.k);
        W::add(dtype_, chunk_ptr(seg, p.c), temps_[p.temp].get(), chunk_len(seg, p.c));
        temp_busy_[p.temp] = false;
      }
      recv_done_[p.index] = 1;
      ++recvs_completed_;
      recvs_.pop_front();
      *moved = true;
    }
    return Status::OK();
  }

  Status test_sends(bool* moved) {
    while (!sends_.empty()) {
      Pending& p = sends_.front();
      int flag = 0;
      ZT_RETURN_IF_ERROR(mpi_check(MPI_Test(&p.request, &flag, MPI_STATUS_IGNORE), "MPI_Test", where_));
      if (!flag) break;
      send_done_[p.index] = 1;
      ++sends_completed_;
      sends_.pop_front();
      *moved = true;
    }
    return Status::OK();
  }

  T* data_;
  std::vector<size_t> counts_;
  std::vector<size_t> offsets_;
  RingConfig cfg_;
  CommDType dtype_;
  int n_, r_;
  size_t chunk_ = 1;
  int k0_ = 0, k1_ = 0;  // steps [k0_, k1_)
  std::vector<size_t> send_base_, recv_base_;
  std::vector<uint8_t> send_done_, recv_done_;
  size_t sends_completed_ = 0, recvs_completed_ = 0;
  Cursor send_cursor_{0, 0}, recv_cursor_{0, 0};
  std::deque<Pending> sends_, recvs_;
  std::unique_ptr<T[]> temps_[kTemps];
  bool temp_busy_[kTemps] = {false, false};
  std::string where_;
};

}  // namespace

std::unique_ptr<CommTask> make_ring_task(RingPhase phase, float* data, std::vector<size_t> counts,
                                         const RingConfig& config) {
  return std::make_unique<RingTask<F32Wire>>(phase, data, std::move(counts), config, CommDType::kF32);
}

std::unique_ptr<CommTask> make_ring_task_16(RingPhase phase, uint16_t* data, std::vector<size_t> counts,
                                            const RingConfig& config, CommDType dtype) {
  return std::make_unique<RingTask<HalfWire>>(phase, data, std::move(counts), config, dtype);
}

std::vector<size_t> ring_even_counts(size_t count, int size) {
  std::vector<size_t> counts(static_cast<size_t>(size), count / static_cast<size_t>(size));
  for (size_t r = 0; r < count % static_cast<size_t>(size); ++r) counts[r] += 1;
  return counts;
}

}  // namespace zt
