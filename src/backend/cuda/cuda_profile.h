// ZT_CUDA_PROFILE=1: where the GPU's time goes, per kernel-table entry. Every table call
// of the CUDA backend records a pair of CUDA events around its work on the stream (no
// synchronisation, so the run is timed as it runs); at exit the totals per entry (calls,
// milliseconds, share of the timed work) go to stderr, largest first. The time between
// entries (the host's, and the engine's own copies) is not in the table.
// Thread-safety: one training thread per process, as the backend.
#pragma once

namespace zt::cuda {

bool profiling_requested();

// The hook of table_wrap.h: events around one call of entry `entry`.
class ProfileScope {
 public:
  explicit ProfileScope(int entry);
  ~ProfileScope();
  ProfileScope(const ProfileScope&) = delete;
  ProfileScope& operator=(const ProfileScope&) = delete;

 private:
  int entry_;
  void* start_;
};

}  // namespace zt::cuda
