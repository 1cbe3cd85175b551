// What `zerotrain train` shows and writes of each step: an engine StepObserver
// (engine/training_loop.h). Rank 0 prints the progress line, an fp16 overflow, the
// wall_clock_breakdown line every steps_per_print steps and the validation loss, writes
// metrics.csv, runs the flops profiler's and comms logger's per-step output and writes
// the monitors; the other ranks only answer wants_peak_rss the same way. No collectives.
// Thread-safety: the training thread.
#pragma once

#include <string>

#include "cli/metrics_csv.h"
#include "cli/monitors.h"
#include "cli/progress.h"
#include "core/timer.h"
#include "engine/parallel_setup.h"
#include "engine/training_loop.h"

namespace zt {

struct TrainView {
  const ZtConfig* cfg = nullptr;
  Trainer* trainer = nullptr;
  const ParallelGroups* groups = nullptr;
  bool lead = false;
  double peak = 0.0;        // the job's compute peak, FLOP/s (0: unknown)
  int world_size = 1;
  int64_t print_every = 1;
  Progress* progress = nullptr;
  MetricsCsv* csv = nullptr;       // null: none
  Monitors* monitors = nullptr;    // null: none (or not rank 0)
};

class TrainObserver : public StepObserver {
 public:
  explicit TrainObserver(const TrainView& v) : v_(v) {}
  bool wants_peak_rss() const override { return Monitors::any_enabled(*v_.cfg); }
  Status on_step(const StepEvent& e) override;
  void on_message(const std::string& line) override {
    if (v_.lead) v_.progress->message(line);
  }

 private:
  void print_lines(const StepEvent& e, const MetricsRow& row);
  TrainView v_;
  Stopwatch run_clock_;
};

}  // namespace zt
