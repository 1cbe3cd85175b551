// ProcessGroup: the collectives and point-to-point operations every distributed part of
// zerotrain uses, with asynchronous Work handles (c10d's Backend/Work shape).
//
// Contract shared by every backend (MPI, in-process threads, single process):
// - Every operation is asynchronous: it is queued and started in call order on the
//   group's own communication thread, so computation on the caller's thread overlaps
//   it. Every rank must issue the same collectives in the same order (zerotrain derives
//   that order from static layer lists, never from data). Buffers must stay valid and
//   untouched until the Work completes.
// - Every operation has a deadline (CommOptions::timeout_s after it starts). A hung peer
//   never hangs the job: the MPI backend prints one line naming the rank, step,
//   operation, sequence number, bytes and elapsed time and aborts the whole job
//   (MPI_Abort, exit status kExitCommTimeout); the thread backend completes the Work
//   with DeadlineExceeded carrying the same message (so tests can check it).
// - Results are deterministic: the same inputs give the same bits on every rank and
//   on every run (fixed reduction order for a given world size and algorithm).
// Thread-safety: one thread issues operations on a group; wait() may be called from it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "comm/memory_domain.h"
#include "core/status.h"

namespace zt {

constexpr int kExitCommTimeout = 75;  // exit status of a job aborted by a communication deadline

enum class CommOp { kAllReduce, kReduceScatter, kAllGather, kBroadcast, kSend, kRecv, kBarrier, kAllToAll };
constexpr int kNumCommOps = 8;
// The tag of zerotrain's own all-to-all (ProcessGroup::all_to_all over send/recv): MPI's
// smallest guaranteed tag bound, above every tag the engine uses itself.
constexpr int kAllToAllTag = 32767;
const char* comm_op_name(CommOp op);  // "all_reduce", "reduce_scatter", ...

// kBF16 / kF16: 16-bit bit patterns, summed by comm/half_sum.h's rule (every addition in
// fp32 from two 16-bit operands, rounded to the format): the wire carries 2 bytes an element.
enum class CommDType { kF32, kF64, kI64, kBF16, kF16 };
size_t comm_dtype_size(CommDType dtype);
const char* comm_dtype_name(CommDType dtype);  // "f32", "f64", "i64", "bf16", "f16"

// Which implementation moves the data of all_reduce, reduce_scatter and all_gather.
enum class CommAlgorithm {
  kMpi,   // the MPI library's own collectives (MPI_Iallreduce, MPI_Ireduce_scatter, MPI_Iallgatherv)
  kRing,  // zerotrain's ring over point-to-point messages: chunked, pipelined
          // reduce-scatter then all-gather (comm/ring.h)
};

struct CommOptions {
  double timeout_s = 600.0;                // deadline of every operation after it starts
  // The ring measured faster than Open MPI's collectives from 16 MiB up and needs only
  // chunk-sized temporaries (MPI's reduce-scatter allocates the whole bucket again):
  // bench/RESULTS.md.
  CommAlgorithm algorithm = CommAlgorithm::kRing;
  size_t ring_chunk_bytes = 1 << 20;       // pipelining granularity of the ring
  // Polling of the communication thread while operations are in flight but not moving:
  // it spins this long after the last progress, then sleeps an eighth of the time since
  // (at least 10 us, at most the cap). With nothing in flight it blocks instead.
  double poll_spin_us = 50.0;
  double poll_max_sleep_us = 1000.0;
};

class Work {
 public:
  virtual ~Work() = default;
  // Blocks until the operation has completed; its status (OK, or DeadlineExceeded /
  // Internal with a message naming rank, operation and sequence number).
  virtual Status wait() = 0;
  virtual bool completed() const = 0;
};
using WorkHandle = std::shared_ptr<Work>;

struct CommOpStats {
  int64_t calls = 0;
  int64_t logical_bytes = 0;  // per rank, counted as the ZeRO paper does (see below)
  double seconds = 0.0;       // summed start-to-finish time of this kind's operations
};

// Per operation kind and message size (payload bytes): what DeepSpeed's comms logger
// tabulates.
struct CommSizeStats {
  int64_t calls = 0;
  double seconds = 0.0;  // summed start-to-finish time
};

// Logical volume per rank: all_reduce of B bytes counts 2B (reduce-scatter + all-gather),
// reduce_scatter and all_gather count the total bytes of all segments, broadcast / send /
// recv their bytes, barrier 0.
struct CommStats {
  CommOpStats ops[kNumCommOps];
  std::map<std::pair<CommOp, int64_t>, CommSizeStats> by_size;  // (op, payload bytes)
  double busy_seconds = 0.0;     // wall time during which at least one operation was in flight
  double exposed_seconds = 0.0;  // wall time callers spent blocked in Work::wait()
  // Share of communication time hidden behind computation: (busy - exposed) / busy.
  double hidden_fraction() const;
  int64_t total_logical_bytes() const;
  const CommOpStats& of(CommOp op) const { return ops[static_cast<int>(op)]; }
};

class ProcessGroup {
 public:
  virtual ~ProcessGroup() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual const char* backend_name() const = 0;  // "mpi", "thread", "single"

  // In-place sum of `count` elements over ranks.
  virtual WorkHandle all_reduce(void* data, size_t count, CommDType dtype) = 0;
  // In-place reduce-scatter of floats over segments: `data` holds sum(counts) floats,
  // segment r starts at counts[0] + ... + counts[r-1] (counts.size() == size(); zero
  // counts allowed). Afterwards this rank's own segment holds the sum over ranks; the
  // contents of the other segments are unspecified.
  virtual WorkHandle reduce_scatter(float* data, const std::vector<size_t>& counts) = 0;
  // In-place all-gather of floats over segments (same layout): before, this rank's own
  // segment holds its data; afterwards every segment holds its owner's data, everywhere.
  virtual WorkHandle all_gather(float* data, const std::vector<size_t>& counts) = 0;
  // reduce_scatter of 16-bit data (dtype kBF16 or kF16), summed by comm/half_sum.h's rule:
  // half the bytes of the fp32 form. Segments as reduce_scatter's, in elements.
  virtual WorkHandle reduce_scatter_16(uint16_t* data, const std::vector<size_t>& counts, CommDType dtype) = 0;
  virtual WorkHandle broadcast(void* data, size_t bytes, int root) = 0;
  virtual WorkHandle send(const void* data, size_t bytes, int dst, int tag) = 0;
  virtual WorkHandle recv(void* data, size_t bytes, int src, int tag) = 0;
  virtual WorkHandle barrier() = 0;
  // All-to-all in bytes (MoE's token exchange): `send` holds one segment per rank in rank
  // order (send_bytes[r] for rank r); rank r's segment for this rank lands in `recv`'s r-th
  // segment (recv_bytes[r]). Sizes agree pairwise: rank a's send_bytes[b] is rank b's
  // recv_bytes[a]. send and recv must not overlap. The default is zerotrain's own
  // exchange, every pair's send and receive posted at once (tag kAllToAllTag, own segment
  // through the group too, so a memory domain sees every byte); the MPI group with
  // algorithm kMpi overrides it with MPI_Ialltoallv.
  virtual WorkHandle all_to_all(const void* send, const std::vector<size_t>& send_bytes, void* recv,
                                const std::vector<size_t>& recv_bytes);

  // The training step, for timeout messages.
  virtual void set_step(int64_t step) = 0;
  // What the caller is doing (a static string such as "checkpoint save"), named by
  // timeout messages; null clears it.
  virtual void set_phase(const char* phase) { (void)phase; }
  // Where the buffers of the operations issued from now on live (null: host memory, the
  // default). The group reads and writes them only inside the domain's access
  // (comm/memory_domain.h). Set by the backend's user before the first such operation.
  virtual void set_memory_domain(MemoryDomain* domain) { (void)domain; }
  // True when the group moves a domain's memory only inside its access, so that a backend
  // with a domain needs no host staging (backend/staged_process_group.h): the in-process
  // groups. MPI's cannot promise it (a peer process may read this one's pages directly).
  virtual bool works_in_memory_domains() const { return false; }
  // False for a group whose collectives read and write no buffer (the group of one
  // process, whose sums are their inputs): no backend memory needs staging for it. (Its
  // all_to_all copies the own segment; MoE's exchange runs only at ep > 1.)
  virtual bool touches_buffers() const { return true; }
  // True for a group that moves a GPU's memory itself (NCCL): never host-staged.
  virtual bool moves_device_memory() const { return false; }
  virtual CommStats stats() const = 0;
  virtual void reset_stats() = 0;
  // The group whose counters stats() reports: a wrapper that forwards them names the group
  // it forwards to, so that a sum over groups counts each operation once.
  virtual const ProcessGroup* stats_owner() const { return this; }

  // The caller gives up on every operation it issued that has not completed (it failed
  // and is about to free their buffers). On return no such buffer is read or written
  // again. Thread backend: each one is withdrawn and its Work fails with `why`, so the
  // peers time out as on a stopped rank. MPI backend: requests cannot be withdrawn safely,
  // so the job ends here: one line with `why`'s message, MPI_Abort with kExitCommTimeout
  // for DeadlineExceeded, else 1.
  virtual void abandon(const Status& why) = 0;
};

// A group of one process: every collective completes at once and changes nothing.
std::unique_ptr<ProcessGroup> make_single_process_group();

}  // namespace zt
