// PsWorkerLink: a worker's traffic with the parameter servers, and its bounded waits.
// - Every wait is bounded by 1.5 x the deadline; past it, DeadlineExceeded with what(elapsed),
//   which names the silent peer.
// - A quarter of the deadline into a wait on one server, the other servers get a
//   kNoteBlocked note: a server that waits on this worker then learns which server it is
//   stuck on, and tells that apart from a stopped worker.
// - Sends are tracked until wait_sends(), notes until wait_notes().
// Invariants: a sent buffer stays alive and unchanged until its wait; after note_finished()
// (the worker's last note) no note is sent.
// Thread-safety: one thread, the worker's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "comm/process_group.h"
#include "core/status.h"
#include "parallel/param_server/ps_messages.h"

namespace zt {

class PsWorkerLink {
 public:
  // ps: every rank of the job; servers: ranks 0..servers-1.
  PsWorkerLink(ProcessGroup* ps, int servers, double deadline_s) : ps_(ps), servers_(servers), deadline_s_(deadline_s) {}
  int rank() const { return ps_->rank(); }
  int servers() const { return servers_; }
  ProcessGroup& group() { return *ps_; }

  // Waits for `work`, which depends on server `server` (-1: on the other workers).
  Status wait(const WorkHandle& work, int server, const std::function<std::string(double)>& what);
  // Sends bytes at data to server with tag; tracked until wait_sends().
  void send(int server, const void* data, size_t bytes, int tag);
  // Every tracked send has been taken; `step` (the worker's) names it in the error.
  Status wait_sends(int64_t step);
  // The worker's last note to every server: it is finished. No note follows.
  void note_finished();
  Status wait_notes();

 private:
  void note(int server, PsNote n);
  void note_blocked(int server);

  ProcessGroup* ps_;
  int servers_;
  double deadline_s_;
  std::vector<std::pair<int, WorkHandle>> sends_;  // by server
  std::deque<PsNote> notes_;                       // notes sent (stable addresses)
  std::vector<WorkHandle> note_works_;
  bool finished_ = false;
};

}  // namespace zt
