// Bounded waiting for parameter-server messages. A server waits on several workers at
// once, so roles poll Work::completed() instead of blocking in Work::wait(); every wait
// has a deadline and failing it returns DeadlineExceeded with a message that names the
// silent peer and its role (the communication layer's own deadline, set longer, stays
// as a backstop). Polling backs off like the communication thread: it yields for 50 us
// after the last progress, then sleeps an eighth of the idle time (20 us to 200 us: a
// step waits on several messages in a chain, so each wake-up delay counts), so a long
// wait costs little CPU and adds at most ~12% latency.
// Thread-safety: a Backoff belongs to one thread.
#pragma once

#include <functional>
#include <string>

#include "comm/process_group.h"
#include "core/status.h"

namespace zt {

class Backoff {
 public:
  void reset() { idle_since_ = -1.0; }  // something moved
  void pause();                         // nothing moved: yield or sleep

 private:
  double idle_since_ = -1.0;
};

// Waits for `work`; DeadlineExceeded(what(elapsed seconds)) when it has not completed
// `deadline_s` after the call, else the Work's status.
Status wait_bounded(const WorkHandle& work, double deadline_s, const std::function<std::string(double)>& what);

// "12.0 s" style durations for messages.
std::string format_seconds(double s);

}  // namespace zt
