// TaskProgress; see task_progress.h.
#include "cli/task_progress.h"

#include <utility>

namespace zt {

TaskProgress::TaskProgress(std::string what, bool tty, FILE* out) : what_(std::move(what)), tty_(tty), out_(out) {}

void TaskProgress::update(double done, double total) {
  total_ = total;
  const double t = clock_.seconds();
  if (t < 1.0) return;  // quiet for short tasks
  if (shown_ && t - last_shown_ < (tty_ ? 0.1 : 10.0)) return;
  show(done, false);
}

void TaskProgress::finish() {
  if (!shown_) return;
  if (last_done_ < total_) {
    show(total_, true);
  } else if (tty_) {
    std::fputc('\n', out_);  // end the line drawn in place
  }
}

void TaskProgress::show(double done, bool final) {
  const double t = clock_.seconds();
  const double pct = total_ > 0 ? 100.0 * done / total_ : 100.0;
  std::fprintf(out_, "%s%s: %.0f%% (%.2f of %.2f GB), %.1f s%s", tty_ ? "\r\033[K" : "", what_.c_str(), pct,
               done / 1e9, total_ / 1e9, t, tty_ && !final ? "" : "\n");
  std::fflush(out_);
  shown_ = true;
  last_shown_ = t;
  last_done_ = done;
}

}  // namespace zt
