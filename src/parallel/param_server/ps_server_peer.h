// PsServer::Peer: a server's view of one worker, shared by ps_server.cc (receiving,
// deadlines) and ps_server_apply.cc (updates, replies). Internal to the server.
// Thread-safety: the server's thread only.
#pragma once

#include <vector>

#include "comm/process_group.h"
#include "parallel/param_server/ps_messages.h"
#include "parallel/param_server/ps_server.h"
#include "tensor/buffer.h"

namespace zt {

struct PsServer::Peer {
  enum class State { kAwaitHeader, kReceiving, kReady, kDone };
  int worker = 0;  // worker index
  int rank = 0;    // world rank
  State state = State::kAwaitHeader;
  StepHeader header;
  PushCommit commit;
  FloatBuffer grad;  // this server's slice of the worker's gradient
  WorkHandle header_work;
  std::vector<WorkHandle> push_works;  // bucket slices, then the commit
  int64_t applied = 0;                 // the worker's pushes applied here: its clock
  bool owes_reply = false;             // a reply to its last push is not sent yet
  PullHeader reply;
  FloatBuffer snapshot;  // asynchronous modes: the shard as sent, while the shard moves on
  std::vector<WorkHandle> reply_works;
  double waiting_since = 0.0;  // its current step began (our reply was sent)
  PsNote note;                 // the worker's notes (ps_messages.h)
  WorkHandle note_work;
  int blocked_on = -1;         // the server its last note says it waits on (-1: none since it last moved)
  bool notes_closed = false;   // its last note (kNoteFinished) arrived
};

inline bool all_completed(const std::vector<WorkHandle>& works) {
  for (const WorkHandle& w : works) {
    if (!w->completed()) return false;
  }
  return true;
}

}  // namespace zt
