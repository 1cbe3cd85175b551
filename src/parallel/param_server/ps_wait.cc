// Polling with back-off and deadlines; see ps_wait.h.
#include "parallel/param_server/ps_wait.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <thread>

#include "core/timer.h"

namespace zt {

void Backoff::pause() {
  const double now = now_seconds();
  if (idle_since_ < 0.0) idle_since_ = now;
  const double idle = now - idle_since_;
  if (idle < 50e-6) {
    std::this_thread::yield();
    return;
  }
  const double sleep_s = std::clamp(idle / 8.0, 20e-6, 200e-6);
  std::this_thread::sleep_for(std::chrono::duration<double>(sleep_s));
}

Status wait_bounded(const WorkHandle& work, double deadline_s, const std::function<std::string(double)>& what) {
  const double start = now_seconds();
  Backoff backoff;
  while (!work->completed()) {
    const double elapsed = now_seconds() - start;
    if (elapsed > deadline_s) return Status::DeadlineExceeded(what(elapsed));
    backoff.pause();
  }
  return work->wait();
}

std::string format_seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f s", s);
  return buf;
}

}  // namespace zt
