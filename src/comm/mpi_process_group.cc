// MpiProcessGroup: argument checks, algorithm choice and the MPI calls of each operation.
// The communication thread posts them (MpiRequestTask or the ring) and tests them.
#include "comm/mpi_process_group.h"

#include <atomic>
#include <climits>
#include <cstdio>
#include <cstring>
#include <unistd.h>

#include "comm/half_sum.h"
#include "comm/mpi_call.h"
#include "comm/mpi_world.h"
#include "comm/segments.h"

namespace zt {

namespace {

MPI_Datatype mpi_type(CommDType dtype) {
  switch (dtype) {
    case CommDType::kF32: return MPI_FLOAT;
    case CommDType::kF64: return MPI_DOUBLE;
    case CommDType::kI64: return MPI_INT64_T;
    case CommDType::kBF16:
    case CommDType::kF16: return MPI_UINT16_T;
  }
  return MPI_DATATYPE_NULL;
}

// MPI's reduction of 16-bit data by comm/half_sum.h's rule (MPI_SUM knows no bf16 or
// f16): one user operation per format, made once MPI is up.
template <CommDType D>
void half_sum_op(void* in, void* inout, int* len, MPI_Datatype*) {
  half_sum_into(D, static_cast<uint16_t*>(inout), static_cast<const uint16_t*>(in), static_cast<size_t>(*len));
}

MPI_Op mpi_sum(CommDType dtype) {
  if (!is_half(dtype)) return MPI_SUM;
  static const MPI_Op bf16 = [] {
    MPI_Op op;
    MPI_Op_create(&half_sum_op<CommDType::kBF16>, 1, &op);
    return op;
  }();
  static const MPI_Op f16 = [] {
    MPI_Op op;
    MPI_Op_create(&half_sum_op<CommDType::kF16>, 1, &op);
    return op;
  }();
  return dtype == CommDType::kBF16 ? bf16 : f16;
}

// Prints the deadline line once per process and aborts the job. Runs on a communication
// thread (never in a signal handler).
[[noreturn]] void abort_job(const std::string& message) {
  static std::atomic<bool> printed{false};
  if (!printed.exchange(true)) {
    std::fflush(stdout);
    std::fprintf(stderr, "zerotrain: %s; aborting the job\n", message.c_str());
    std::fflush(stderr);
  }
  MPI_Abort(MPI_COMM_WORLD, kExitCommTimeout);
  _exit(kExitCommTimeout);  // MPI_Abort does not return; this is belt and braces
}

Status too_large(const char* what) {
  return Status::Unimplemented(std::string(what) +
                               " exceeds MPI's int element count; use the ring algorithm or smaller buckets");
}

}  // namespace

StatusOr<std::unique_ptr<MpiProcessGroup>> MpiProcessGroup::create(MPI_Comm comm, std::string name,
                                                                   const CommOptions& options,
                                                                   std::shared_ptr<MpiRegistry> registry) {
  const std::string where = "creating group " + name;
  ZT_RETURN_IF_ERROR(mpi_check(MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler", where));
  Ranks ranks;
  ZT_RETURN_IF_ERROR(mpi_check(MPI_Comm_rank(comm, &ranks.rank), "MPI_Comm_rank", where));
  ZT_RETURN_IF_ERROR(mpi_check(MPI_Comm_size(comm, &ranks.size), "MPI_Comm_size", where));
  ZT_RETURN_IF_ERROR(mpi_check(MPI_Comm_rank(MPI_COMM_WORLD, &ranks.world_rank), "MPI_Comm_rank", where));
  void* attr = nullptr;
  int found = 0;
  ZT_RETURN_IF_ERROR(mpi_check(MPI_Comm_get_attr(comm, MPI_TAG_UB, &attr, &found), "MPI_Comm_get_attr", where));
  if (found && attr != nullptr) ranks.tag_ub = *static_cast<int*>(attr);
  MPI_Comm ring_comm = MPI_COMM_NULL;
  ZT_RETURN_IF_ERROR(mpi_check(MPI_Comm_dup(comm, &ring_comm), "MPI_Comm_dup", where));
  return std::unique_ptr<MpiProcessGroup>(
      new MpiProcessGroup(comm, ring_comm, std::move(name), options, ranks, std::move(registry)));
}

MpiProcessGroup::MpiProcessGroup(MPI_Comm comm, MPI_Comm ring_comm, std::string name, const CommOptions& options,
                                 const Ranks& ranks, std::shared_ptr<MpiRegistry> registry)
    : comm_(comm), ring_comm_(ring_comm), name_(std::move(name)), options_(options), registry_(std::move(registry)),
      rank_(ranks.rank), size_(ranks.size), world_rank_(ranks.world_rank), tag_ub_(ranks.tag_ub) {
  EngineConfig config;
  config.rank = world_rank_;
  config.group = name_ == "world" ? "" : "group " + name_;
  config.options = options_;
  config.policy = DeadlinePolicy::kAbortJob;
  config.abort_job = abort_job;
  engine_ = std::make_unique<CommEngine>(std::move(config));
  std::lock_guard<std::mutex> lock(registry_->mu);
  registry_->live.insert(this);
}

void MpiProcessGroup::abandon(const Status& why) { abort_mpi_job(why); }

MpiProcessGroup::~MpiProcessGroup() {
  std::lock_guard<std::mutex> lock(registry_->mu);
  if (!registry_->finalized) release();
  registry_->live.erase(this);
}

void MpiProcessGroup::release() {
  if (released_) return;
  released_ = true;
  engine_->shutdown();
  mpi_warn(MPI_Comm_free(&ring_comm_), "MPI_Comm_free", "releasing group " + name_);
  mpi_warn(MPI_Comm_free(&comm_), "MPI_Comm_free", "releasing group " + name_);
}

WorkHandle MpiProcessGroup::submit(CommOp op, size_t bytes, std::unique_ptr<CommTask> task) {
  ZT_CHECK(!released_, "%s issued on MPI group %s after its MpiWorld was destroyed", comm_op_name(op), name_.c_str());
  OpInfo info;
  info.op = op;
  info.bytes = static_cast<int64_t>(bytes);
  info.logical_bytes = logical_bytes_of(op, info.bytes);
  return engine_->submit(info, std::move(task));
}

std::unique_ptr<CommTask> MpiProcessGroup::mpi_task(const char* call,
                                                    std::function<int(MPI_Comm, MPI_Request*)> start,
                                                    std::function<void()> on_done) {
  MPI_Comm comm = comm_;
  return std::make_unique<MpiRequestTask>(
      call, [comm, start = std::move(start)](MPI_Request* req) { return start(comm, req); }, std::move(on_done),
      name_, rank_, size_);
}

RingConfig MpiProcessGroup::ring_config() {
  RingConfig config;
  config.comm = ring_comm_;
  config.rank = rank_;
  config.size = size_;
  config.tag = static_cast<int>(ring_seq_++ % 32768);
  config.chunk_bytes = options_.ring_chunk_bytes;
  config.group = name_;
  return config;
}

std::unique_ptr<CommTask> MpiProcessGroup::ring_task(RingPhase phase, float* data, std::vector<size_t> counts) {
  return make_ring_task(phase, data, std::move(counts), ring_config());
}

WorkHandle MpiProcessGroup::all_reduce(void* data, size_t count, CommDType dtype) {
  const size_t bytes = count * comm_dtype_size(dtype);
  check_buffer("all_reduce", data, bytes);
  if (use_ring() && dtype == CommDType::kF32) {
    return submit(CommOp::kAllReduce, bytes,
                  ring_task(RingPhase::kAllReduce, static_cast<float*>(data), ring_even_counts(count, size_)));
  }
  if (use_ring() && is_half(dtype)) {
    return submit(CommOp::kAllReduce, bytes,
                  make_ring_task_16(RingPhase::kAllReduce, static_cast<uint16_t*>(data), ring_even_counts(count, size_),
                                    ring_config(), dtype));
  }
  if (count > static_cast<size_t>(INT_MAX)) return submit(CommOp::kAllReduce, bytes, make_failed_task(too_large("count")));
  const MPI_Datatype type = mpi_type(dtype);
  const MPI_Op op = mpi_sum(dtype);
  return submit(CommOp::kAllReduce, bytes, mpi_task("MPI_Iallreduce", [=](MPI_Comm comm, MPI_Request* req) {
                  return MPI_Iallreduce(MPI_IN_PLACE, data, static_cast<int>(count), type, op, comm, req);
                }));
}

WorkHandle MpiProcessGroup::reduce_scatter(float* data, const std::vector<size_t>& counts) {
  check_segments("reduce_scatter", data, counts, size_);
  const size_t bytes = segment_offsets(counts).back() * sizeof(float);
  if (use_ring()) return submit(CommOp::kReduceScatter, bytes, ring_task(RingPhase::kReduceScatter, data, counts));
  return mpi_reduce_scatter(data, counts, CommDType::kF32);
}

WorkHandle MpiProcessGroup::reduce_scatter_16(uint16_t* data, const std::vector<size_t>& counts, CommDType dtype) {
  check_segments_16(data, counts, size_, dtype);
  const size_t bytes = segment_offsets(counts).back() * sizeof(uint16_t);
  if (use_ring()) {
    return submit(CommOp::kReduceScatter, bytes,
                  make_ring_task_16(RingPhase::kReduceScatter, data, counts, ring_config(), dtype));
  }
  return mpi_reduce_scatter(data, counts, dtype);
}

// MPI_Ireduce_scatter has no in-place form that keeps our layout: reduce into a temporary,
// then copy it into this rank's segment.
WorkHandle MpiProcessGroup::mpi_reduce_scatter(void* data, const std::vector<size_t>& counts, CommDType dtype) {
  const std::vector<size_t> offsets = segment_offsets(counts);
  const size_t es = comm_dtype_size(dtype), bytes = offsets.back() * es;
  auto recv_counts = std::make_shared<std::vector<int>>(counts.size());
  for (size_t r = 0; r < counts.size(); ++r) {
    if (counts[r] > static_cast<size_t>(INT_MAX)) {
      return submit(CommOp::kReduceScatter, bytes, make_failed_task(too_large("a segment count")));
    }
    (*recv_counts)[r] = static_cast<int>(counts[r]);
  }
  auto temp = std::make_shared<std::vector<char>>(counts[rank_] * es);
  char* own = static_cast<char*>(data) + offsets[rank_] * es;
  const MPI_Datatype type = mpi_type(dtype);
  const MPI_Op op = mpi_sum(dtype);
  return submit(CommOp::kReduceScatter, bytes,
                mpi_task(
                    "MPI_Ireduce_scatter",
                    [=](MPI_Comm comm, MPI_Request* req) {
                      return MPI_Ireduce_scatter(data, temp->data(), recv_counts->data(), type, op, comm, req);
                    },
                    [=] {
                      if (!temp->empty()) std::memcpy(own, temp->data(), temp->size());
                    }));
}

WorkHandle MpiProcessGroup::all_gather(float* data, const std::vector<size_t>& counts) {
  check_segments("all_gather", data, counts, size_);
  const std::vector<size_t> offsets = segment_offsets(counts);
  const size_t bytes = offsets.back() * sizeof(float);
  if (use_ring()) return submit(CommOp::kAllGather, bytes, ring_task(RingPhase::kAllGather, data, counts));
  auto recv_counts = std::make_shared<std::vector<int>>(counts.size());
  auto displs = std::make_shared<std::vector<int>>(counts.size());
  for (size_t r = 0; r < counts.size(); ++r) {
    if (counts[r] > static_cast<size_t>(INT_MAX) || offsets[r] > static_cast<size_t>(INT_MAX)) {
      return submit(CommOp::kAllGather, bytes, make_failed_task(too_large("a segment count or offset")));
    }
    (*recv_counts)[r] = static_cast<int>(counts[r]);
    (*displs)[r] = static_cast<int>(offsets[r]);
  }
  return submit(CommOp::kAllGather, bytes, mpi_task("MPI_Iallgatherv", [=](MPI_Comm comm, MPI_Request* req) {
                  return MPI_Iallgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, data, recv_counts->data(),
                                         displs->data(), MPI_FLOAT, comm, req);
                }));
}

WorkHandle MpiProcessGroup::broadcast(void* data, size_t bytes, int root) {
  check_buffer("broadcast", data, bytes);
  check_peer("broadcast", root, size_);
  if (bytes > static_cast<size_t>(INT_MAX)) return submit(CommOp::kBroadcast, bytes, make_failed_task(too_large("bytes")));
  return submit(CommOp::kBroadcast, bytes, mpi_task("MPI_Ibcast", [=](MPI_Comm comm, MPI_Request* req) {
                  return MPI_Ibcast(data, static_cast<int>(bytes), MPI_BYTE, root, comm, req);
                }));
}

WorkHandle MpiProcessGroup::send(const void* data, size_t bytes, int dst, int tag) {
  check_buffer("send", data, bytes);
  check_peer("send", dst, size_);
  ZT_CHECK(tag >= 0 && tag <= tag_ub_, "send: tag %d outside 0..%d", tag, tag_ub_);
  if (bytes > static_cast<size_t>(INT_MAX)) return submit(CommOp::kSend, bytes, make_failed_task(too_large("bytes")));
  return submit(CommOp::kSend, bytes, mpi_task("MPI_Isend", [=](MPI_Comm comm, MPI_Request* req) {
                  return MPI_Isend(data, static_cast<int>(bytes), MPI_BYTE, dst, tag, comm, req);
                }));
}

WorkHandle MpiProcessGroup::recv(void* data, size_t bytes, int src, int tag) {
  check_buffer("recv", data, bytes);
  check_peer("recv", src, size_);
  ZT_CHECK(tag >= 0 && tag <= tag_ub_, "recv: tag %d outside 0..%d", tag, tag_ub_);
  if (bytes > static_cast<size_t>(INT_MAX)) return submit(CommOp::kRecv, bytes, make_failed_task(too_large("bytes")));
  return submit(CommOp::kRecv, bytes, mpi_task("MPI_Irecv", [=](MPI_Comm comm, MPI_Request* req) {
                  return MPI_Irecv(data, static_cast<int>(bytes), MPI_BYTE, src, tag, comm, req);
                }));
}

WorkHandle MpiProcessGroup::barrier() {
  return submit(CommOp::kBarrier, 0, mpi_task("MPI_Ibarrier", [](MPI_Comm comm, MPI_Request* req) {
                  return MPI_Ibarrier(comm, req);
                }));
}

namespace {

// Counts and displacements in bytes as MPI's ints; false when one does not fit.
bool int_layout(const std::vector<size_t>& bytes, std::vector<int>* counts, std::vector<int>* displs) {
  size_t at = 0;
  for (size_t r = 0; r < bytes.size(); ++r) {
    if (bytes[r] > static_cast<size_t>(INT_MAX) || at > static_cast<size_t>(INT_MAX)) return false;
    (*counts)[r] = static_cast<int>(bytes[r]);
    (*displs)[r] = static_cast<int>(at);
    at += bytes[r];
  }
  return true;
}

}  // namespace

WorkHandle MpiProcessGroup::all_to_all(const void* send, const std::vector<size_t>& send_bytes, void* recv,
                                       const std::vector<size_t>& recv_bytes) {
  if (options_.algorithm == CommAlgorithm::kRing) return ProcessGroup::all_to_all(send, send_bytes, recv, recv_bytes);
  ZT_CHECK(static_cast<int>(send_bytes.size()) == size_ && static_cast<int>(recv_bytes.size()) == size_,
           "all_to_all: %zu send and %zu receive segments for %d ranks", send_bytes.size(), recv_bytes.size(), size_);
  const size_t n = static_cast<size_t>(size_);
  auto sc = std::make_shared<std::vector<int>>(n), sd = std::make_shared<std::vector<int>>(n);
  auto rc = std::make_shared<std::vector<int>>(n), rd = std::make_shared<std::vector<int>>(n);
  size_t total = 0;
  for (size_t b : recv_bytes) total += b;
  if (!int_layout(send_bytes, sc.get(), sd.get()) || !int_layout(recv_bytes, rc.get(), rd.get())) {
    return submit(CommOp::kAllToAll, total, make_failed_task(too_large("a segment or offset")));
  }
  return submit(CommOp::kAllToAll, total, mpi_task("MPI_Ialltoallv", [=](MPI_Comm comm, MPI_Request* req) {
                  return MPI_Ialltoallv(send, sc->data(), sd->data(), MPI_BYTE, recv, rc->data(), rd->data(), MPI_BYTE,
                                        comm, req);
                }));
}

}  // namespace zt
