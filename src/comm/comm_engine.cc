// CommEngine: the per-group communication thread (queue, progress loop, deadlines,
// back-off) and the statistics every backend shares.
#include "comm/comm_engine.h"

#include <pthread.h>

#include <sys/prctl.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <optional>

#include "core/timer.h"

namespace zt {

namespace {

constexpr double kFirstSleepUs = 10.0;

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// The Work of a queued operation: completed once by the communication thread.
class EngineWork final : public Work {
 public:
  explicit EngineWork(std::shared_ptr<StatsRecorder> recorder) : recorder_(std::move(recorder)) {}

  Status wait() override {
    std::unique_lock<std::mutex> lock(mu_);
    if (!done_) {
      const double t0 = now_seconds();
      cv_.wait(lock, [&] { return done_; });
      // Blocked from t0 until the operation finished (not until this thread woke): that
      // interval lies inside the busy interval, so exposed <= busy always holds.
      recorder_->add_exposed(std::max(0.0, finished_at_ - t0));
    }
    return status_;
  }
  bool completed() const override { return done_flag_.load(std::memory_order_acquire); }

  void complete(Status status, double finished_at) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      status_ = std::move(status);
      finished_at_ = finished_at;
      done_ = true;
      done_flag_.store(true, std::memory_order_release);
    }
    cv_.notify_all();
  }

 private:
  std::shared_ptr<StatsRecorder> recorder_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  std::atomic<bool> done_flag_{false};
  double finished_at_ = 0.0;
  Status status_;
};

class CompletedWork final : public Work {
 public:
  explicit CompletedWork(Status status) : status_(std::move(status)) {}
  Status wait() override { return status_; }
  bool completed() const override { return true; }

 private:
  Status status_;
};

class FailedTask final : public CommTask {
 public:
  explicit FailedTask(Status status) : status_(std::move(status)) {}
  Status start(const OpInfo& info) override {
    return Status(status_.code(), describe_op(info) + ": " + status_.message());
  }
  Status progress(bool* done, bool*) override {
    *done = true;
    return Status::OK();
  }

 private:
  Status status_;
};

}  // namespace

std::unique_ptr<CommTask> make_failed_task(Status status) { return std::make_unique<FailedTask>(std::move(status)); }

std::string format_bytes(int64_t bytes) {
  char buf[64];
  const double b = static_cast<double>(bytes);
  if (bytes < 1024) {
    std::snprintf(buf, sizeof(buf), "%" PRId64 " B", bytes);
  } else if (bytes < (int64_t{1} << 20)) {
    std::snprintf(buf, sizeof(buf), "%.2f KiB", b / 1024.0);
  } else if (bytes < (int64_t{1} << 30)) {
    std::snprintf(buf, sizeof(buf), "%.2f MiB", b / (1024.0 * 1024.0));
  } else {
    std::snprintf(buf, sizeof(buf), "%.2f GiB", b / (1024.0 * 1024.0 * 1024.0));
  }
  return buf;
}

std::string describe_op(const OpInfo& info) {
  char buf[128];
  std::snprintf(buf, sizeof(buf), "%s #%" PRId64 " (%s)", comm_op_name(info.op), info.seq,
                format_bytes(info.bytes).c_str());
  return buf;
}

std::string timeout_message(int rank, const std::string& group, const OpInfo& info, double elapsed_s,
                            double timeout_s) {
  char head[96];
  if (info.step >= 0) {
    std::snprintf(head, sizeof(head), "rank %d: communication timeout at step %" PRId64 ": ", rank, info.step);
  } else {
    std::snprintf(head, sizeof(head), "rank %d: communication timeout: ", rank);
  }
  if (info.phase != nullptr) {
    std::string h = head;
    h.insert(h.size() - 2, std::string(" during ") + info.phase);
    std::snprintf(head, sizeof(head), "%s", h.c_str());
  }
  char tail[160];
  std::snprintf(tail, sizeof(tail), " did not complete in %.1f s (timeout %g s); a peer is hung or stopped",
                elapsed_s, timeout_s);
  return std::string(head) + describe_op(info) + (group.empty() ? "" : " on " + group) + tail;
}

int64_t logical_bytes_of(CommOp op, int64_t bytes) {
  switch (op) {
    case CommOp::kAllReduce: return 2 * bytes;
    case CommOp::kBarrier: return 0;
    default: return bytes;
  }
}

void StatsRecorder::on_issue(CommOp op, int64_t logical_bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  CommOpStats& s = stats_.ops[static_cast<int>(op)];
  s.calls += 1;
  s.logical_bytes += logical_bytes;
  if (in_flight_++ == 0) busy_since_ = now_seconds();
}

void StatsRecorder::on_finish(CommOp op, double seconds, int64_t bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  stats_.ops[static_cast<int>(op)].seconds += seconds;
  CommSizeStats& sized = stats_.by_size[{op, bytes}];
  sized.calls += 1;
  sized.seconds += seconds;
  ZT_CHECK(in_flight_ > 0, "operation finished with none in flight");
  if (--in_flight_ == 0) stats_.busy_seconds += now_seconds() - busy_since_;
}

void StatsRecorder::add_exposed(double seconds) {
  std::lock_guard<std::mutex> lock(mu_);
  stats_.exposed_seconds += seconds;
}

CommStats StatsRecorder::snapshot() const {
  std::lock_guard<std::mutex> lock(mu_);
  CommStats s = stats_;
  if (in_flight_ > 0) s.busy_seconds += now_seconds() - busy_since_;
  return s;
}

void StatsRecorder::reset() {
  std::lock_guard<std::mutex> lock(mu_);
  stats_ = CommStats{};
  busy_since_ = now_seconds();
}

WorkHandle make_completed_work(Status status) { return std::make_shared<CompletedWork>(std::move(status)); }

struct CommEngine::Entry {
  OpInfo info;
  std::unique_ptr<CommTask> task;
  std::shared_ptr<EngineWork> work;
  double started = 0.0;
};

CommEngine::CommEngine(EngineConfig config) : config_(std::move(config)) {
  thread_ = std::thread([this] {
    pthread_setname_np(pthread_self(), "zt-comm");  // not a compute thread (tests/cli/threads_cli_test.cc)
    loop();
  });
}

CommEngine::~CommEngine() { shutdown(); }

void CommEngine::shutdown() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void CommEngine::abandon(const Status& why) {
  if (config_.policy == DeadlinePolicy::kAbortJob && config_.abort_job) config_.abort_job(why.message());
  std::unique_lock<std::mutex> lock(mu_);
  abandon_ = true;
  abandon_status_ = why;
  cv_.notify_all();
  abandoned_cv_.wait(lock, [&] { return !abandon_; });
}

void CommEngine::set_step(int64_t step) { step_ = step; }

WorkHandle CommEngine::submit(OpInfo info, std::unique_ptr<CommTask> task) {
  info.seq = next_seq_++;
  info.step = step_;
  info.phase = phase_;
  auto entry = std::make_unique<Entry>();
  entry->info = info;
  entry->task = std::move(task);
  entry->work = std::make_shared<EngineWork>(recorder_);
  WorkHandle handle = entry->work;
  recorder_->on_issue(info.op, info.logical_bytes);
  {
    std::lock_guard<std::mutex> lock(mu_);
    ZT_CHECK(!stop_, "operation %s issued on a group that is shutting down", describe_op(info).c_str());
    queue_.push_back(std::move(entry));
  }
  cv_.notify_one();
  return handle;
}

void CommEngine::finish(Entry& entry, Status status) {
  const double t = now_seconds();
  recorder_->on_finish(entry.info.op, entry.started > 0.0 ? t - entry.started : 0.0, entry.info.bytes);
  entry.task.reset();  // release temporaries before the caller resumes
  entry.work->complete(std::move(status), t);
}

bool CommEngine::advance(std::deque<std::unique_ptr<Entry>>& fresh, std::vector<std::unique_ptr<Entry>>& active) {
  // The tasks touch the callers' buffers only here and in the cancels, inside the group's
  // memory domain (comm/memory_domain.h); never while the loop sleeps.
  DomainAccess access(domain_.load());
  bool progressed = !fresh.empty();
  for (auto& e : fresh) {  // start in issue order
    e->started = now_seconds();
    Status s = e->task->start(e->info);
    if (!s.ok()) {
      finish(*e, std::move(s));
    } else {
      active.push_back(std::move(e));
    }
  }
  fresh.clear();
  for (size_t i = 0; i < active.size();) {
    bool done = false, moved = false;
    Status s = active[i]->task->progress(&done, &moved);
    if (!s.ok() || done) {
      progressed = true;
      finish(*active[i], std::move(s));
      active.erase(active.begin() + static_cast<std::ptrdiff_t>(i));
    } else {
      progressed |= moved;
      ++i;
    }
  }
  return progressed;
}

void CommEngine::expire(std::vector<std::unique_ptr<Entry>>& active, double t, double timeout_s) {
  for (size_t i = 0; i < active.size();) {
    const double elapsed = t - active[i]->started;
    if (elapsed <= timeout_s) {
      ++i;
      continue;
    }
    const std::string msg = timeout_message(config_.rank, config_.group, active[i]->info, elapsed, timeout_s);
    if (config_.policy == DeadlinePolicy::kAbortJob && config_.abort_job) config_.abort_job(msg);
    DomainAccess access(domain_.load());
    active[i]->task->cancel();
    finish(*active[i], Status::DeadlineExceeded(msg));
    active.erase(active.begin() + static_cast<std::ptrdiff_t>(i));
  }
}

void CommEngine::loop() {
  // Sleeps of tens of microseconds must stay that short: the default 50 us timer slack
  // would stretch each one.
  prctl(PR_SET_TIMERSLACK, 1000UL, 0UL, 0UL, 0UL);
  const double spin_s = config_.options.poll_spin_us * 1e-6;
  const double max_sleep_us = std::max(kFirstSleepUs, config_.options.poll_max_sleep_us);
  const double timeout_s = config_.options.timeout_s;
  std::vector<std::unique_ptr<Entry>> active;
  std::deque<std::unique_ptr<Entry>> fresh;
  double last_progress = now_seconds();
  for (;;) {
    std::optional<Status> abandon;
    {
      std::unique_lock<std::mutex> lock(mu_);
      if (active.empty()) cv_.wait(lock, [&] { return stop_ || abandon_ || !queue_.empty(); });
      if (abandon_) abandon = abandon_status_;
      if (!abandon && active.empty() && queue_.empty()) return;  // stop_ and drained
      fresh.swap(queue_);
    }
    if (abandon) {  // withdraw everything, then let the caller free its buffers
      DomainAccess access(domain_.load());
      for (auto& e : active) {
        e->task->cancel();
        finish(*e, *abandon);
      }
      for (auto& e : fresh) finish(*e, *abandon);  // never started
      active.clear();
      fresh.clear();
      std::lock_guard<std::mutex> lock(mu_);
      abandon_ = false;
      abandoned_cv_.notify_all();
      continue;
    }
    bool progressed = advance(fresh, active);
    if (active.empty()) continue;
    const double t = now_seconds();
    if (timeout_s > 0.0) expire(active, t, timeout_s);
    if (progressed) {
      last_progress = t;
    } else if (t - last_progress < spin_s) {
      cpu_relax();
    } else {
      // Sleep about an eighth of the time nothing has moved (10 us at first, the cap
      // after ~8 ms): a late peer costs at most ~12% extra latency, and a long wait only
      // a few hundred wake-ups per second.
      const double sleep_us = std::clamp(0.125e6 * (t - last_progress), kFirstSleepUs, max_sleep_us);
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait_for(lock, std::chrono::duration<double, std::micro>(sleep_us), [&] { return abandon_ || !queue_.empty(); });
    }
  }
}

}  // namespace zt
