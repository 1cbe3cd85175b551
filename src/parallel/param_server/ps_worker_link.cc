// A worker's bounded waits, tracked sends and notes to the servers; see ps_worker_link.h.
#include "parallel/param_server/ps_worker_link.h"

#include "core/timer.h"
#include "parallel/param_server/ps_wait.h"

namespace zt {

Status PsWorkerLink::wait(const WorkHandle& work, int server, const std::function<std::string(double)>& what) {
  const double start = now_seconds();
  bool noted = false;
  Backoff backoff;
  while (!work->completed()) {
    const double elapsed = now_seconds() - start;
    if (elapsed > 1.5 * deadline_s_) return Status::DeadlineExceeded(what(elapsed));
    if (!noted && server >= 0 && !finished_ && elapsed > 0.25 * deadline_s_) {
      note_blocked(server);
      noted = true;
    }
    backoff.pause();
  }
  return work->wait();
}

void PsWorkerLink::send(int server, const void* data, size_t bytes, int tag) {
  sends_.emplace_back(server, ps_->send(data, bytes, server, tag));
}

Status PsWorkerLink::wait_sends(int64_t step) {
  for (const auto& [s, w] : sends_) {
    ZT_RETURN_IF_ERROR(wait(w, s, [&, s = s](double e) {
      return "worker rank " + std::to_string(rank()) + ": parameter server rank " + std::to_string(s) +
             " did not take the messages of this worker's step " + std::to_string(step) + " within " +
             format_seconds(e) + " (1.5 x the deadline): the server is stopped or hung; stopping the job";
    }));
  }
  sends_.clear();
  return Status::OK();
}

void PsWorkerLink::note(int server, PsNote n) {
  notes_.push_back(n);
  note_works_.push_back(ps_->send(&notes_.back(), sizeof(PsNote), server, kTagNote));
}

void PsWorkerLink::note_blocked(int server) {
  for (int s = 0; s < servers_; ++s) {
    if (s != server) note(s, PsNote{kNoteBlocked, server});
  }
}

void PsWorkerLink::note_finished() {
  finished_ = true;
  for (int s = 0; s < servers_; ++s) note(s, PsNote{kNoteFinished, -1});
}

Status PsWorkerLink::wait_notes() {
  for (const WorkHandle& w : note_works_) {
    ZT_RETURN_IF_ERROR(wait(w, -1, [&](double e) {
      return "worker rank " + std::to_string(rank()) + ": a parameter server did not take this worker's last note within " +
             format_seconds(e) + "; stopping the job";
    }));
  }
  return Status::OK();
}

}  // namespace zt
