// ThreadWorld: the in-process backend. N ranks are threads of one process that meet
// through shared memory (gloo's spawnThreads + HashStore idea), so collective code runs
// under plain ctest without MPI. Each group a rank holds has its own communication thread
// and the full ProcessGroup contract: asynchronous, started in issue order, deadlines
// complete the Work with DeadlineExceeded (message as the MPI backend prints), and sums are
// deterministic: every element is added in rank order 0..N-1. CommAlgorithm::kRing is
// accepted and runs this same exact implementation (there is no wire to pipeline over).
// Thread-safety: group()/subgroup() may be called concurrently from rank threads; each
// returned group is then used by its rank's thread only.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "comm/process_group.h"
#include "core/status.h"

namespace zt {

struct ThreadGroupShared;

class ThreadWorld {
 public:
  ThreadWorld(int size, const CommOptions& options);
  ~ThreadWorld();
  ThreadWorld(const ThreadWorld&) = delete;
  ThreadWorld& operator=(const ThreadWorld&) = delete;

  int size() const { return size_; }
  // The world as seen by `rank`. Calling it again makes a new, independent world group
  // (the k-th call of every rank forms the k-th group).
  std::unique_ptr<ProcessGroup> group(int rank);
  // A group over `world_ranks` (sorted or not; group rank = position in the list) as seen
  // by `world_rank`, which must be in the list. Every member calls it; the k-th call with
  // the same list by each member forms the same group.
  std::unique_ptr<ProcessGroup> subgroup(const std::vector<int>& world_ranks, int world_rank);

 private:
  int size_;
  CommOptions options_;
  std::mutex mu_;
  // Per member list: the groups created so far, and how many each world rank has joined.
  std::map<std::vector<int>, std::vector<std::shared_ptr<ThreadGroupShared>>> groups_;  // guarded by mu_
  std::map<std::pair<std::vector<int>, int>, size_t> joined_;                           // guarded by mu_
};

// Runs fn(0) .. fn(size-1) on `size` threads and returns the first failure in rank order
// (OK when every rank succeeded).
Status run_ranks(int size, const std::function<Status(int rank)>& fn);

}  // namespace zt
