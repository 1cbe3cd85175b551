// The wire format of parameter-server training: fixed-size POD messages and their tags.
// Per step, worker -> each server: a StepHeader (which unit, which parameter version it
// computes with), one push message per bucket slice of that server's shard (tag
// kTagBucketBase + bucket, raw floats, sent as backward produces the bucket), then a
// PushCommit (loss and squared norm, known only after backward). A StepHeader of kind
// kStepDone says the worker has no more work. Server -> worker: a PullHeader then the
// shard's floats (tags kTagPullHeader / kTagPullData), as a reply to each push and once
// more (kind kPullFinal) when every worker is done. A worker blocked a quarter of the
// deadline on one server sends a PsNote (tag kTagNote) to the others, so that a server
// whose deadline for that worker passes blames the silent server, not the worker; its
// last note (kNoteFinished) goes with its done header. Messages of one kind between two
// ranks are matched in order (MPI's non-overtaking rule; the thread backend's FIFOs).
// Thread-safety: plain values.
#pragma once

#include <cstdint>

namespace zt {

constexpr int kTagStepHeader = 1;
constexpr int kTagCommit = 2;
constexpr int kTagPullHeader = 3;
constexpr int kTagPullData = 4;
constexpr int kTagNote = 5;
constexpr int kTagBucketBase = 16;  // + bucket index

constexpr int64_t kStepPush = 1;
constexpr int64_t kStepDone = 2;

struct StepHeader {
  int64_t kind = kStepPush;
  int64_t unit = 0;          // the unit of work this step computes
  int64_t read_version = 0;  // the server's version in the parameters the worker uses
  int64_t read_clock = 0;    // the server's clock (slowest worker's steps) in those parameters
};

struct PushCommit {
  double loss_sum = 0.0;  // sum of per-token losses over the unit's counted tokens
  double sumsq = 0.0;     // squared L2 norm of the worker's whole gradient (asynchronous modes)
  int64_t counted = 0;    // counted (non-ignored) target tokens of the unit
  int64_t reserved = 0;
};

constexpr int64_t kPullParams = 1;
constexpr int64_t kPullFinal = 2;

struct PullHeader {
  int64_t kind = kPullParams;
  int64_t next_unit = -1;  // server 0: the worker's next unit, or -1 (stop); others -1
  int64_t version = 0;      // optimizer updates applied to the shard
  int64_t clock = 0;        // min over working workers of their pushes applied
  int64_t global_step = 0;  // global steps' worth of samples applied (updates / W in async modes)
  double loss = 0.0;        // of the last update: the global batch's (sync) or the push's
  double grad_norm = 0.0;
  double lr = 0.0;
};

constexpr int64_t kNoteBlocked = 1;
constexpr int64_t kNoteFinished = 2;

struct PsNote {
  int64_t kind = kNoteBlocked;
  int64_t server = -1;  // kNoteBlocked: the server the worker waits on
};

}  // namespace zt
