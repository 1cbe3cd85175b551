// make_single_process_group: a group of one process. Every collective is already done
// when issued (the sum over one rank is the input), so no thread is needed; statistics
// are still counted so a single-process run reports the same figures.
// Thread-safety: one issuing thread, like every ProcessGroup.
#include <cstring>
#include <memory>

#include "comm/comm_engine.h"
#include "comm/segments.h"
#include "core/check.h"

namespace zt {

namespace {

class SingleProcessGroup final : public ProcessGroup {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  const char* backend_name() const override { return "single"; }
  bool works_in_memory_domains() const override { return true; }
  bool touches_buffers() const override { return false; }
  void abandon(const Status&) override {}  // every operation completes when issued

  WorkHandle all_reduce(void* data, size_t count, CommDType dtype) override {
    const size_t bytes = count * comm_dtype_size(dtype);
    check_buffer("all_reduce", data, bytes);
    return done(CommOp::kAllReduce, bytes);
  }
  WorkHandle reduce_scatter(float* data, const std::vector<size_t>& counts) override {
    check_segments("reduce_scatter", data, counts, 1);
    return done(CommOp::kReduceScatter, counts[0] * sizeof(float));
  }
  WorkHandle all_gather(float* data, const std::vector<size_t>& counts) override {
    check_segments("all_gather", data, counts, 1);
    return done(CommOp::kAllGather, counts[0] * sizeof(float));
  }
  WorkHandle reduce_scatter_16(uint16_t* data, const std::vector<size_t>& counts, CommDType dtype) override {
    check_segments_16(data, counts, 1, dtype);
    return done(CommOp::kReduceScatter, counts[0] * sizeof(uint16_t));
  }

  WorkHandle broadcast(void* data, size_t bytes, int root) override {
    check_buffer("broadcast", data, bytes);
    check_peer("broadcast", root, 1);
    return done(CommOp::kBroadcast, bytes);
  }
  WorkHandle send(const void*, size_t bytes, int dst, int) override {
    check_peer("send", dst, 1);
    recorder_.on_issue(CommOp::kSend, static_cast<int64_t>(bytes));
    recorder_.on_finish(CommOp::kSend, 0.0, static_cast<int64_t>(bytes));
    return make_completed_work(Status::InvalidArgument("send: a group of one process has no peer to send to"));
  }
  WorkHandle recv(void*, size_t bytes, int src, int) override {
    check_peer("recv", src, 1);
    recorder_.on_issue(CommOp::kRecv, static_cast<int64_t>(bytes));
    recorder_.on_finish(CommOp::kRecv, 0.0, static_cast<int64_t>(bytes));
    return make_completed_work(Status::InvalidArgument("recv: a group of one process has no peer to receive from"));
  }
  WorkHandle barrier() override { return done(CommOp::kBarrier, 0); }
  // The own segment, copied (a group of one lives in host memory).
  WorkHandle all_to_all(const void* send, const std::vector<size_t>& send_bytes, void* recv,
                        const std::vector<size_t>& recv_bytes) override {
    ZT_CHECK(send_bytes.size() == 1 && recv_bytes.size() == 1 && send_bytes[0] == recv_bytes[0],
             "all_to_all: a group of one sends itself as many bytes as it receives");
    if (send_bytes[0] > 0) std::memcpy(recv, send, send_bytes[0]);
    return done(CommOp::kAllToAll, send_bytes[0]);
  }

  void set_step(int64_t) override {}
  CommStats stats() const override { return recorder_.snapshot(); }
  void reset_stats() override { recorder_.reset(); }

 private:
  WorkHandle done(CommOp op, size_t bytes) {
    recorder_.on_issue(op, logical_bytes_of(op, static_cast<int64_t>(bytes)));
    recorder_.on_finish(op, 0.0, static_cast<int64_t>(bytes));
    return make_completed_work(Status::OK());
  }

  StatsRecorder recorder_;
};

}  // namespace

std::unique_ptr<ProcessGroup> make_single_process_group() { return std::make_unique<SingleProcessGroup>(); }

}  // namespace zt
