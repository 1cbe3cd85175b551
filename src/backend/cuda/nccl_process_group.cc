// NcclProcessGroup (nccl_process_group.h): the shared communicator state, the Work that
// polls an operation's event and the communicator against the deadline, and the group.
#include "backend/cuda/nccl_process_group.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>

#include "backend/cuda/cuda_context.h"
#include "backend/cuda/nccl_api.h"
#include "comm/comm_engine.h"
#include "comm/mpi_world.h"
#include "comm/segments.h"

namespace zt::cuda {

namespace {

double now_s() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

ncclDataType_t nccl_type(CommDType d) {
  switch (d) {
    case CommDType::kF32: return ncclFloat32;
    case CommDType::kF64: return ncclFloat64;
    case CommDType::kI64: return ncclInt64;
    case CommDType::kBF16: return ncclBfloat16;
    case CommDType::kF16: return ncclFloat16;
  }
  return ncclFloat32;
}

// The communicator, its stream and device scratch for host buffers; shared by the group
// and its Works (a Work may outlive nothing, but abandon() and wait() both reach it).
struct NcclShared {
  const NcclApi* api = nullptr;
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
  int rank = 0, size = 1;
  CommOptions options;
  std::atomic<int64_t> step{0};
  std::atomic<const char*> phase{nullptr};
  std::atomic<bool> aborted{false};
  std::mutex mu;  // stats
  CommStats stats;
  void* scratch = nullptr;  // host buffers' device copy; grows
  size_t scratch_bytes = 0;
  void* barrier_float = nullptr;  // the barrier's all-reduce operand; never moves
  bool always_grouped = false;  // NcclOptions::always_grouped
  bool abort_job = false;       // the host group is MPI's: a failure stops every rank (abort_mpi_job)
  // ncclCommDestroy waits for the communicator's operations and returns early (leaving
  // the thread inside an NCCL group) on an unread asynchronous error: a communicator with
  // an error, or whose stream is still busy after a short grace (a peer gone), is aborted.
  ~NcclShared() {
    if (comm != nullptr && !aborted.load()) {
      if (clean_within(std::min(5.0, options.timeout_s))) {
        api->destroy(comm);
      } else {
        abort();
      }
    }
    if (stream != nullptr) cudaStreamDestroy(stream);
    if (scratch != nullptr) cudaFree(scratch);
    if (barrier_float != nullptr) cudaFree(barrier_float);
  }
  void abort() {
    if (comm != nullptr && !aborted.exchange(true)) api->abort(comm);
  }
  // A failure: the communicator aborted and, under MPI, the whole job stopped with the
  // reason, as the MPI backend stops it (exit 75 on a deadline), so that no peer waits out
  // its own deadline or blocks freeing memory that a stuck kernel uses; else returned.
  Status fail(Status why) {
    abort();
    if (abort_job) abort_mpi_job(why);
    return why;
  }
  // The NCCL stream waits for the work queued on the compute stream so far.
  void follow_compute() {
    cudaEvent_t ready = nullptr;
    check_cuda(cudaEventCreateWithFlags(&ready, cudaEventDisableTiming), "NCCL: event");
    check_cuda(cudaEventRecord(ready, CudaContext::get().stream()), "NCCL: event");
    check_cuda(cudaStreamWaitEvent(stream, ready, 0), "NCCL: stream wait");
    cudaEventDestroy(ready);
  }
  // True when the communicator has no error and its stream drains within `seconds`
  // (false once aborted: NCCL frees an aborted communicator).
  bool clean_within(double seconds) const {
    if (aborted.load()) return false;
    const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    for (;;) {
      ncclResult_t state = ncclSuccess;
      api->async_error(comm, &state);
      if (state != ncclSuccess && state != ncclInProgress) return false;
      const cudaError_t q = stream != nullptr ? cudaStreamQuery(stream) : cudaSuccess;
      if (q == cudaSuccess && state == ncclSuccess) return true;
      if (q != cudaSuccess && q != cudaErrorNotReady) return false;
      if (std::chrono::steady_clock::now() > until) return false;
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  }
  // "rank 1: NCCL all_reduce #12 (4096 bytes) at step 3": what every message starts with.
  std::string op_name(CommOp op, int64_t seq, size_t bytes) const {
    const char* p = phase.load();
    return "rank " + std::to_string(rank) + ": NCCL " + comm_op_name(op) + " #" + std::to_string(seq) + " (" +
           std::to_string(bytes) + " bytes) at step " + std::to_string(step.load()) + (p != nullptr ? std::string(" during ") + p : "");
  }
};

// Polls the communicator until it leaves ncclInProgress (non-blocking mode): OK, its
// error (the communicator aborted), or DeadlineExceeded at `deadline`.
// `invalid_usage_hint` is appended to an ncclInvalidUsage error (the communicator's
// init reports "Duplicate GPU" asynchronously).
Status settle(NcclShared& s, double deadline, const std::string& what, const char* invalid_usage_hint = "") {
  for (;;) {
    ncclResult_t state = ncclSuccess;
    s.api->async_error(s.comm, &state);
    if (state == ncclSuccess) return Status::OK();
    if (state != ncclInProgress) {
      const std::string msg = nccl_error(*s.api, s.comm, state);
      return s.fail(Status::Internal(what + " failed: " + msg + (state == ncclInvalidUsage ? invalid_usage_hint : "")));
    }
    if (now_s() > deadline) {
      return s.fail(
          Status::DeadlineExceeded(what + " did not complete within " + std::to_string(s.options.timeout_s) + " s"));
    }
    std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
}

// One operation: done when its event (recorded on the NCCL stream after it) completes. Its
// time in flight is the NCCL stream's, from `begin` (recorded once the stream reached it)
// to `done`; one stream runs the group's operations in order, so their sum is the time
// the group was busy. The caller's time blocked in wait() is the exposed part.
class NcclWork final : public Work {
 public:
  NcclWork(std::shared_ptr<NcclShared> s, cudaEvent_t begin, cudaEvent_t done, CommOp op, int64_t seq, size_t bytes)
      : s_(std::move(s)), begin_(begin), done_(done), op_(op), seq_(seq), bytes_(bytes), start_(now_s()) {}
  ~NcclWork() override {
    cudaEventDestroy(begin_);
    cudaEventDestroy(done_);
  }
  Status wait() override {
    if (finished_) return status_;
    const double blocked = now_s();
    status_ = poll();
    finished_ = true;
    const double t = now_s();
    float ms = 0.0f;  // an aborted or failed operation: its host-side span instead
    const double flight = status_.ok() && cudaEventElapsedTime(&ms, begin_, done_) == cudaSuccess ? ms * 1e-3 : t - start_;
    std::lock_guard<std::mutex> lock(s_->mu);
    s_->stats.ops[static_cast<int>(op_)].seconds += flight;
    s_->stats.by_size[{op_, static_cast<int64_t>(bytes_)}].seconds += flight;
    s_->stats.busy_seconds += flight;
    s_->stats.exposed_seconds += t - blocked;
    return status_;
  }
  // After an abort every operation not yet waited fails: ncclCommAbort ends the kernels
  // early, so their events complete on partial data.
  bool completed() const override {
    return finished_ || s_->aborted.load() || cudaEventQuery(done_) == cudaSuccess;
  }

 private:
  Status poll() {
    const std::string what = s_->op_name(op_, seq_, bytes_);
    const double deadline = start_ + s_->options.timeout_s;
    for (;;) {
      if (s_->aborted.load()) return Status::FailedPrecondition(what + ": the communicator was aborted");
      const cudaError_t q = cudaEventQuery(done_);
      if (q == cudaSuccess) return Status::OK();
      if (q != cudaErrorNotReady) return Status::Internal(what + ": " + cudaGetErrorString(q));
      ncclResult_t state = ncclSuccess;
      s_->api->async_error(s_->comm, &state);
      if (state != ncclSuccess && state != ncclInProgress) {
        const std::string msg = nccl_error(*s_->api, s_->comm, state);
        return s_->fail(Status::Internal(what + " failed: " + msg));
      }
      if (now_s() > deadline) {
        return s_->fail(Status::DeadlineExceeded(what + " did not complete within " +
                                                 std::to_string(s_->options.timeout_s) +
                                                 " s (a rank stopped, or issued another collective)"));
      }
      std::this_thread::sleep_for(std::chrono::microseconds(10));
    }
  }

  std::shared_ptr<NcclShared> s_;
  cudaEvent_t begin_, done_;
  CommOp op_;
  int64_t seq_;
  size_t bytes_;
  double start_;
  bool finished_ = false;
  Status status_;
};

bool equal_counts(const std::vector<size_t>& counts) {
  for (size_t c : counts) {
    if (c != counts[0]) return false;
  }
  return true;
}

class NcclProcessGroup final : public ProcessGroup {
 public:
  explicit NcclProcessGroup(std::shared_ptr<NcclShared> s) : s_(std::move(s)) {}
  ~NcclProcessGroup() override = default;
  int rank() const override { return s_->rank; }
  int size() const override { return s_->size; }
  const char* backend_name() const override { return "nccl"; }
  bool moves_device_memory() const override { return true; }

  WorkHandle all_reduce(void* data, size_t count, CommDType dtype) override {
    const size_t bytes = count * comm_dtype_size(dtype);
    return run(CommOp::kAllReduce, data, bytes, 2 * bytes, [&](char* d) {
      return s_->api->all_reduce(d, d, count, nccl_type(dtype), ncclSum, s_->comm, s_->stream);
    });
  }
  WorkHandle reduce_scatter(float* data, const std::vector<size_t>& counts) override {
    return segments(CommOp::kReduceScatter, data, counts, ncclFloat32, sizeof(float));
  }
  WorkHandle all_gather(float* data, const std::vector<size_t>& counts) override {
    return segments(CommOp::kAllGather, data, counts, ncclFloat32, sizeof(float));
  }
  WorkHandle reduce_scatter_16(uint16_t* data, const std::vector<size_t>& counts, CommDType dtype) override {
    check_segments_16(data, counts, size(), dtype);
    return segments(CommOp::kReduceScatter, data, counts, nccl_type(dtype), sizeof(uint16_t));
  }
  WorkHandle broadcast(void* data, size_t bytes, int root) override {
    check_peer("broadcast", root, size());
    return run(CommOp::kBroadcast, data, bytes, bytes, [&](char* d) {
      return s_->api->broadcast(d, d, bytes, ncclUint8, root, s_->comm, s_->stream);
    });
  }
  WorkHandle barrier() override {
    return run(CommOp::kBarrier, s_->barrier_float, 4, 0, [&](char* d) {
      return s_->api->all_reduce(d, d, 1, ncclFloat32, ncclSum, s_->comm, s_->stream);
    });
  }
  WorkHandle send(const void*, size_t, int, int) override { return untagged("send"); }
  WorkHandle recv(void*, size_t, int, int) override { return untagged("recv"); }
  WorkHandle all_to_all(const void*, const std::vector<size_t>&, void*, const std::vector<size_t>&) override {
    return untagged("all_to_all");
  }

  void set_step(int64_t step) override { s_->step = step; }
  void set_phase(const char* phase) override { s_->phase = phase; }
  CommStats stats() const override {
    std::lock_guard<std::mutex> lock(s_->mu);
    return s_->stats;
  }
  void reset_stats() override {
    std::lock_guard<std::mutex> lock(s_->mu);
    s_->stats = CommStats{};
  }
  void abandon(const Status&) override { s_->abort(); }

 private:
  static WorkHandle untagged(const char* op) {
    return make_completed_work(Status::Unimplemented(std::string("NCCL ") + op + ": NCCL matches messages by order, "
                                                     "not tags; pipeline hand-offs and MoE's exchange run on the "
                                                     "host-staged group"));
  }
  template <typename Enqueue>
  WorkHandle run(CommOp op, void* data, size_t bytes, int64_t logical, Enqueue enqueue);
  WorkHandle segments(CommOp op, void* data, const std::vector<size_t>& counts, ncclDataType_t type, size_t elem);
  // The operation enqueued on the NCCL stream after the compute stream's queued kernels.
  template <typename Enqueue>
  WorkHandle start(CommOp op, size_t bytes, Enqueue enqueue);

  std::shared_ptr<NcclShared> s_;
  int64_t seq_ = 0;
};

}  // namespace
}  // namespace zt::cuda

namespace zt::cuda {

namespace {

template <typename Enqueue>
WorkHandle NcclProcessGroup::start(CommOp op, size_t bytes, Enqueue enqueue) {
  const int64_t seq = ++seq_;
  const std::string what = s_->op_name(op, seq, bytes);
  if (s_->aborted.load()) return make_completed_work(Status::FailedPrecondition(what + ": the communicator was aborted"));
  cudaEvent_t begin = nullptr, done = nullptr;
  s_->follow_compute();
  check_cuda(cudaEventCreate(&begin), "NCCL: event");  // timing events: the operation's time on the stream
  check_cuda(cudaEventRecord(begin, s_->stream), "NCCL: event");
  const ncclResult_t r = enqueue();
  if (r != ncclSuccess && r != ncclInProgress) {
    cudaEventDestroy(begin);
    const std::string msg = nccl_error(*s_->api, s_->comm, r);
    return make_completed_work(s_->fail(Status::Internal(what + " failed: " + msg)));
  }
  if (r == ncclInProgress) {
    const Status st = settle(*s_, now_s() + s_->options.timeout_s, what);
    if (!st.ok()) {
      cudaEventDestroy(begin);
      return make_completed_work(st);
    }
  }
  check_cuda(cudaEventCreate(&done), "NCCL: event");
  check_cuda(cudaEventRecord(done, s_->stream), "NCCL: event");
  return std::make_shared<NcclWork>(s_, begin, done, op, seq, bytes);
}

// Device buffers: the operation itself. Host buffers (scalars): through device scratch,
// completed before returning.
template <typename Enqueue>
WorkHandle NcclProcessGroup::run(CommOp op, void* data, size_t bytes, int64_t logical, Enqueue enqueue) {
  {
    std::lock_guard<std::mutex> lock(s_->mu);
    CommOpStats& o = s_->stats.ops[static_cast<int>(op)];
    ++o.calls;
    o.logical_bytes += logical;
    ++s_->stats.by_size[{op, static_cast<int64_t>(bytes)}].calls;
  }
  if (bytes == 0 || is_device_memory(data)) {  // the barrier's float too
    return start(op, bytes, [&] { return enqueue(static_cast<char*>(data)); });
  }
  if (s_->aborted.load()) {  // (an aborted communicator is freed: nothing below may touch it)
    return make_completed_work(
        Status::FailedPrecondition(s_->op_name(op, seq_ + 1, bytes) + ": the communicator was aborted"));
  }
  // Nothing in flight may still use the scratch; a peer that stopped ends this at the deadline.
  if (!s_->clean_within(s_->options.timeout_s)) {
    return make_completed_work(s_->fail(Status::DeadlineExceeded(
        s_->op_name(op, seq_ + 1, bytes) + ": the NCCL stream did not drain within " +
        std::to_string(s_->options.timeout_s) + " s, or the communicator failed")));
  }
  if (s_->scratch_bytes < bytes) {
    cudaFree(s_->scratch);
    s_->scratch_bytes = 0;
    if (cudaMalloc(&s_->scratch, bytes) != cudaSuccess) {
      s_->scratch = nullptr;  // never a freed pointer
      cudaGetLastError();
      return make_completed_work(Status::ResourceExhausted("NCCL: out of GPU memory for " + std::to_string(bytes) +
                                                           " bytes of scratch for a host buffer"));
    }
    s_->scratch_bytes = bytes;
  }
  char* d = static_cast<char*>(s_->scratch);
  s_->follow_compute();  // data may be page-locked memory that queued work is still writing
  check_cuda(cudaMemcpyAsync(d, data, bytes, cudaMemcpyHostToDevice, s_->stream), "NCCL: in");
  WorkHandle w = start(op, bytes, [&] { return enqueue(d); });
  Status st = w->wait();
  if (st.ok()) check_cuda(cudaMemcpy(data, d, bytes, cudaMemcpyDeviceToHost), "NCCL: out");
  return make_completed_work(st);
}

// Equal segments: NCCL's reduce-scatter / all-gather in place; unequal ones: one NCCL
// group of per-owner reduces / broadcasts.
WorkHandle NcclProcessGroup::segments(CommOp op, void* data, const std::vector<size_t>& counts, ncclDataType_t type,
                                      size_t elem) {
  check_segments(comm_op_name(op), data, counts, size());
  const std::vector<size_t> off = segment_offsets(counts);
  const size_t me = static_cast<size_t>(rank()), total = off.back() * elem;
  const bool scatter = op == CommOp::kReduceScatter;
  const NcclApi& api = *s_->api;
  return run(op, data, total, static_cast<int64_t>(total), [&](char* d) -> ncclResult_t {
    if (equal_counts(counts) && !s_->always_grouped) {
      return scatter ? api.reduce_scatter(d, d + off[me] * elem, counts[0], type, ncclSum, s_->comm, s_->stream)
                     : api.all_gather(d + off[me] * elem, d, counts[0], type, s_->comm, s_->stream);
    }
    api.group_start();
    for (size_t r = 0; r < counts.size(); ++r) {
      char* seg = d + off[r] * elem;
      const int root = static_cast<int>(r);
      if (counts[r] == 0) continue;
      if (scatter) api.reduce(seg, seg, counts[r], type, ncclSum, root, s_->comm, s_->stream);
      if (!scatter) api.broadcast(seg, seg, counts[r], type, root, s_->comm, s_->stream);
    }
    return api.group_end();
  });
}

// The communicator over `host`'s ranks, initialised non-blocking within the deadline.
// Rank 0's id travels with whether ncclGetUniqueId worked, so a failure there stops
// every rank at once instead of leaving them to time out.
Status init_comm(NcclShared& s, ProcessGroup& host) {
  struct {
    ncclUniqueId id;
    int32_t ok;
  } msg{};
  ncclResult_t got = ncclSuccess;
  if (host.rank() == 0) {
    got = s.api->get_unique_id(&msg.id);
    msg.ok = got == ncclSuccess ? 1 : 0;
  }
  ZT_RETURN_IF_ERROR(host.broadcast(&msg, sizeof(msg), 0)->wait());
  if (msg.ok == 0) {
    return Status::Internal("ncclGetUniqueId failed on rank 0" +
                            (host.rank() == 0 ? ": " + nccl_error(*s.api, nullptr, got) : std::string()));
  }
  const std::string what = "rank " + std::to_string(s.rank) + ": ncclCommInitRankConfig";
  const char* hint = " (two ranks on one GPU need NCCL 2.30 or later with NCCL_MULTI_RANK_GPU_ENABLE=1)";
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  const ncclResult_t r = s.api->init_rank_config(&s.comm, s.size, msg.id, s.rank, &config);
  if (r != ncclSuccess && r != ncclInProgress) {
    const std::string why = nccl_error(*s.api, s.comm, r);  // (NCCL may have made the communicator before failing)
    return s.fail(Status::FailedPrecondition(what + " failed: " + why + (r == ncclInvalidUsage ? hint : "")));
  }
  return settle(s, now_s() + s.options.timeout_s, what, hint);
}

}  // namespace

StatusOr<std::unique_ptr<ProcessGroup>> make_nccl_process_group(ProcessGroup& host, const CommOptions& options,
                                                                const NcclOptions& nccl) {
  ZT_ASSIGN_OR_RETURN(const NcclApi* api, nccl_api());
  auto s = std::make_shared<NcclShared>();
  s->api = api;
  s->rank = host.rank();
  s->size = host.size();
  s->options = options;
  s->always_grouped = nccl.always_grouped;
  s->abort_job = std::string(host.backend_name()) == "mpi";
  ZT_RETURN_IF_ERROR(init_comm(*s, host));
  check_cuda(cudaStreamCreateWithFlags(&s->stream, cudaStreamNonBlocking), "NCCL: stream");
  check_cuda(cudaMalloc(&s->scratch, 256), "NCCL: scratch");
  s->scratch_bytes = 256;
  check_cuda(cudaMalloc(&s->barrier_float, sizeof(float)), "NCCL: barrier");
  check_cuda(cudaMemsetAsync(s->barrier_float, 0, sizeof(float), s->stream), "NCCL: barrier");
  return std::unique_ptr<ProcessGroup>(std::make_unique<NcclProcessGroup>(std::move(s)));
}

int loaded_nccl_version() {
  const StatusOr<const NcclApi*> api = nccl_api();
  return api.ok() ? api.value()->version : 0;
}

}  // namespace zt::cuda
