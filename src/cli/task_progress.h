// Progress of a long command that is not training (prepare on large inputs, export and
// import of large models: the bytes written): on a terminal, one line redrawn in place at most ten times a
// second ("prepare: 45% (1.20 of 2.65 GB), 3.1 s"); in a log (no terminal), a plain line
// every 10 s. A task that ends within its first second prints nothing, so small runs
// and tests stay quiet.
// Thread-safety: single-threaded.
#pragma once

#include <cstdio>
#include <string>

#include "core/progress_fn.h"
#include "core/timer.h"

namespace zt {

class TaskProgress {
 public:
  // tty: redraw in place (Progress::stdout_is_terminal()).
  TaskProgress(std::string what, bool tty, FILE* out = stdout);
  // done of total bytes so far.
  void update(double done_bytes, double total_bytes);
  // The last line (100 %), if anything was shown.
  void finish();
  // update() as a ProgressFn for library calls (valid while this object lives).
  ProgressFn fn() {
    return [this](uint64_t done, uint64_t total) { update(static_cast<double>(done), static_cast<double>(total)); };
  }

 private:
  void show(double done, bool final);
  std::string what_;
  double total_ = 0.0;
  bool tty_;
  FILE* out_;
  Stopwatch clock_;
  double last_shown_ = -1.0;  // seconds since the start, of the last line
  double last_done_ = -1.0;
  bool shown_ = false;
};

}  // namespace zt
