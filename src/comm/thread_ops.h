// The thread backend's meeting place and its operations as CommTasks.
// Collectives meet in a Slot keyed by the group's collective counter (identical on every
// rank because every rank issues the same collectives in order). A rank's task registers
// its buffer, waits until all have arrived, does its share of the work reading peers'
// buffers (phase 1), waits until all have done theirs, then writes its own buffer where
// needed (phase 2); so no buffer is written while a peer may still read it. Point-to-point
// messages meet in FIFO channels keyed by (src, dst, tag); the receiver copies.
// A task cancelled at its deadline withdraws its buffer under the lock and marks the slot
// abandoned: nobody touches that collective's buffers again, and its remaining members
// time out in turn, as they would on a hung MPI peer.
// Thread-safety: all shared state is guarded by ThreadGroupShared::mu; every access to a
// peer's buffer happens under it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "comm/comm_engine.h"

namespace zt {

struct ThreadSlot {
  // Signature recorded by the first arrival; later arrivals must match it.
  CommOp op = CommOp::kBarrier;
  CommDType dtype = CommDType::kF32;
  size_t count = 0;             // all_reduce elements, broadcast bytes
  std::vector<size_t> counts;   // reduce_scatter / all_gather segments
  int root = 0;
  int first_rank = 0;
  std::vector<void*> bufs;      // by group rank; null until arrived (or after withdrawal)
  int arrived = 0, computed = 0, left = 0;
  std::vector<unsigned char> result;  // all_reduce: the sum, filled in partitions
  bool abandoned = false;
};

struct ThreadMessage {
  const void* data = nullptr;
  size_t bytes = 0;
  bool done = false;
  std::string error;  // set by the receiver on a size mismatch
};

struct ThreadChannel {
  std::deque<std::shared_ptr<ThreadMessage>> sends;
  std::deque<const void*> recvs;  // identities of posted receives, in order
};

struct ThreadGroupShared {
  explicit ThreadGroupShared(int n) : size(n) {}
  const int size;
  std::mutex mu;
  std::map<int64_t, std::shared_ptr<ThreadSlot>> slots;                  // guarded by mu
  std::map<std::tuple<int, int, int>, ThreadChannel> channels;           // guarded by mu
};

// The description of one collective call, as issued by one rank.
struct ThreadCollective {
  CommOp op = CommOp::kBarrier;
  CommDType dtype = CommDType::kF32;
  void* data = nullptr;
  size_t count = 0;            // all_reduce elements, broadcast bytes
  std::vector<size_t> counts;  // reduce_scatter / all_gather
  int root = 0;
};

std::unique_ptr<CommTask> make_thread_collective(std::shared_ptr<ThreadGroupShared> shared, int rank,
                                                 int64_t coll_seq, ThreadCollective call);
std::unique_ptr<CommTask> make_thread_send(std::shared_ptr<ThreadGroupShared> shared, int src, int dst, int tag,
                                           const void* data, size_t bytes);
std::unique_ptr<CommTask> make_thread_recv(std::shared_ptr<ThreadGroupShared> shared, int src, int dst, int tag,
                                           void* data, size_t bytes);

}  // namespace zt
