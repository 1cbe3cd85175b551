// What each role of a parameter-server job measures. Staleness is recorded per applied
// push in two units: `staleness` in steps, the pushing worker's step minus the server's
// clock (the slowest working worker's pushes applied) in the parameters it computed with:
// the quantity the bounded mode limits (never above `staleness`; 0 in synchronous mode);
// and `missed`, the optimizer updates applied to the shard between the worker's pull and
// this push (the classic asynchronous-SGD delay, about W-1 per step even for lock-step
// asynchronous workers, 0 in synchronous mode).
// Thread-safety: plain values.
#pragma once

#include <array>
#include <cstdint>

namespace zt {

constexpr int kStalenessBins = 16;  // values 0..14, and 15 or more

struct StalenessHistogram {
  std::array<int64_t, kStalenessBins> counts{};
  int64_t max = 0;
  int64_t total = 0;  // pushes recorded
  double sum = 0.0;

  void add(int64_t value) {
    counts[static_cast<size_t>(value < kStalenessBins - 1 ? value : kStalenessBins - 1)] += 1;
    if (value > max) max = value;
    total += 1;
    sum += static_cast<double>(value);
  }
  double mean() const { return total > 0 ? sum / static_cast<double>(total) : 0.0; }
};

struct PsServerStats {
  int64_t updates = 0;  // optimizer updates applied to the shard
  int64_t pushes = 0;   // complete pushes received
  double serve_s = 0.0; // wall time serving
  double apply_s = 0.0; // summing, norms, optimizer steps
  StalenessHistogram staleness;
  StalenessHistogram missed;
  int64_t push_bytes = 0;  // gradient payload received
  int64_t pull_bytes = 0;  // parameter payload sent
};

struct PsWorkerStats {
  int64_t units = 0;  // steps this worker computed
  int64_t tokens = 0;
  double wall_s = 0.0;       // first step to final parameters
  double compute_s = 0.0;    // forward, loss and backward (pushes overlap it)
  double pull_wait_s = 0.0;  // blocked waiting for parameters (what forward did not hide)
  double slow_s = 0.0;       // the slow-worker test hook's sleeps
  int64_t push_bytes = 0;    // gradient payload sent
  int64_t pull_bytes = 0;    // parameter payload received
};

}  // namespace zt
