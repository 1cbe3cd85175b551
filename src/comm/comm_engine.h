// CommEngine: the machinery every queued ProcessGroup backend shares. One communication
// thread per group starts operations (CommTask state machines) in issue order and
// progresses all in-flight ones together, enforces each one's deadline, and records
// CommStats. With nothing in flight the thread blocks on a condition variable; while
// operations are in flight but not progressing it spins briefly (poll_spin_us), then
// sleeps for an eighth of the time nothing has moved (10 us growing to poll_max_sleep_us),
// so a long wait on a late peer costs little CPU and adds at most ~12% latency.
// Thread-safety: submit/set_step/stats/reset_stats from the issuing thread; tasks are
// started, progressed and cancelled only on the communication thread.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "comm/process_group.h"

namespace zt {

// What an operation is, for statistics and for deadline messages.
struct OpInfo {
  CommOp op = CommOp::kBarrier;
  int64_t seq = 0;            // per-group sequence number, 1 for the first operation
  int64_t step = -1;          // training step at issue (-1: none set)
  const char* phase = nullptr; // what the caller was doing, for messages (static string), or null
  int64_t bytes = 0;          // payload bytes (what the message names)
  int64_t logical_bytes = 0;  // CommStats counting
};

// "all_reduce #57 (16.00 MiB)".
std::string describe_op(const OpInfo& info);
// "16.00 MiB", "12 B", "1.50 KiB".
std::string format_bytes(int64_t bytes);
// "rank 1: communication timeout at step 12: all_reduce #57 (16.00 MiB) did not complete in
// 3.0 s (timeout 3 s); a peer is hung or stopped". `group` is appended as " on <group>" after
// the operation when it is not empty.
std::string timeout_message(int rank, const std::string& group, const OpInfo& info, double elapsed_s,
                            double timeout_s);
// Logical bytes per CommStats' counting.
int64_t logical_bytes_of(CommOp op, int64_t bytes);

// One operation's non-blocking state machine, touched only by the communication thread.
class CommTask {
 public:
  virtual ~CommTask() = default;
  // Begins the operation (posts requests, registers buffers). An error fails the Work.
  // `info` carries the sequence number and step, for messages.
  virtual Status start(const OpInfo& info) = 0;
  // Advances the operation without blocking. Sets *done when it has completed and
  // *progressed when some part of it moved (that resets the polling back-off).
  virtual Status progress(bool* done, bool* progressed) = 0;
  // The Work fails (its deadline passed, or the caller abandoned it): drop every
  // reference peers hold to the caller's buffers (the thread backend); the task is
  // destroyed right after.
  virtual void cancel() {}
};

// Thread-safe accumulator behind CommStats; shared with Work handles (exposed time).
class StatsRecorder {
 public:
  void on_issue(CommOp op, int64_t logical_bytes);  // counts the call, opens a busy interval
  void on_finish(CommOp op, double seconds, int64_t bytes);  // closes it; bytes: the payload
  void add_exposed(double seconds);
  CommStats snapshot() const;
  void reset();

 private:
  mutable std::mutex mu_;
  CommStats stats_;
  int in_flight_ = 0;
  double busy_since_ = 0.0;
};

// A Work already complete (single-process groups).
WorkHandle make_completed_work(Status status);
// A task whose start() fails with `status` (an operation the backend cannot run; it is
// still numbered and counted like any other).
std::unique_ptr<CommTask> make_failed_task(Status status);

// What the engine does when an operation passes its deadline.
enum class DeadlinePolicy {
  kFailWork,  // cancel the task and complete its Work with DeadlineExceeded (thread backend)
  kAbortJob,  // call the abort hook (MPI backend: print one line, MPI_Abort); never returns
};

struct EngineConfig {
  int rank = 0;            // rank named in deadline messages
  std::string group;       // "" for the world, else a name for messages
  CommOptions options;
  DeadlinePolicy policy = DeadlinePolicy::kFailWork;
  // kAbortJob: called on the communication thread with the full message; must not return.
  std::function<void(const std::string& message)> abort_job;
};

class CommEngine {
 public:
  explicit CommEngine(EngineConfig config);
  ~CommEngine();  // drains: every queued operation completes (or fails) before the thread joins
  CommEngine(const CommEngine&) = delete;
  CommEngine& operator=(const CommEngine&) = delete;

  // Queues `task`, numbering it; the op/bytes of `info` are filled by the caller.
  WorkHandle submit(OpInfo info, std::unique_ptr<CommTask> task);
  void set_step(int64_t step);
  void set_phase(const char* phase) { phase_ = phase; }
  // The domain the communication thread enters while it starts, progresses or cancels
  // tasks (ProcessGroup::set_memory_domain).
  void set_memory_domain(MemoryDomain* domain) { domain_.store(domain); }
  CommStats stats() const { return recorder_->snapshot(); }
  void reset_stats() { recorder_->reset(); }
  // kFailWork: cancels every queued and in-flight operation, failing its Work with `why`,
  // and returns once the communication thread has done so (ProcessGroup::abandon).
  // kAbortJob: calls the abort hook with `why`'s message.
  void abandon(const Status& why);
  // Stops accepting work, drains the queue, joins the thread. Idempotent.
  void shutdown();
  const EngineConfig& config() const { return config_; }

 private:
  struct Entry;
  void loop();
  // Starts the fresh tasks and progresses the active ones, inside the memory domain;
  // true when something moved.
  bool advance(std::deque<std::unique_ptr<Entry>>& fresh, std::vector<std::unique_ptr<Entry>>& active);
  // Fails the active tasks past their deadline (time t).
  void expire(std::vector<std::unique_ptr<Entry>>& active, double t, double timeout_s);
  void finish(Entry& entry, Status status);

  EngineConfig config_;
  std::shared_ptr<StatsRecorder> recorder_ = std::make_shared<StatsRecorder>();
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::unique_ptr<Entry>> queue_;  // guarded by mu_
  bool stop_ = false;                         // guarded by mu_
  bool abandon_ = false;                      // guarded by mu_: a caller waits in abandon()
  Status abandon_status_;                     // guarded by mu_
  std::condition_variable abandoned_cv_;      // signalled when abandon_ is served
  int64_t next_seq_ = 1;                      // issuing thread only
  int64_t step_ = -1;                         // issuing thread only
  const char* phase_ = nullptr;               // issuing thread only
  std::atomic<MemoryDomain*> domain_{nullptr};  // set by the issuing thread, read by the loop
  std::thread thread_;
};

}  // namespace zt
