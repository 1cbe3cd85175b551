// PsServer: one server rank of a parameter-server job. Owns its shard of the parameters
// and the optimizer state for it (AdamW or SGD over the shard's range), receives every
// worker's pushes for the shard, applies them per the mode and answers each push with the
// shard's current parameters:
// - kSync: once all W pushes of a global step are in, sums them in worker order, takes
//   the global gradient norm (the servers all-reduce their shards' sums of squares),
//   clips DeepSpeed-style and applies one update at the schedule's value for that step;
//   workers normalise by the global batch's token count, so this is the all-reduce step.
//   The update runs slice by slice in forward order (PsLayout::reply_slices) and each
//   slice is sent as soon as it is updated, so workers start their next forward early.
// - kAsync / kBounded: applies each complete push at once as 1/W of a global step: the
//   gradient is the unit's mean (workers normalise by their own token count), clipped by
//   its own norm, and the learning rate is the schedule's value for global step
//   floor(updates / W) divided by W, so W stale-free pushes make the synchronous SGD step
//   and AdamW moves as far per global batch as in synchronous mode. kBounded holds a
//   worker's reply while its next step would lead the slowest working worker by more
//   than `staleness`.
// Server 0 also hands out units of work with each reply (statically in kSync, first come
// first served otherwise) and says "stop" once the job's units are spent; workers then
// report done, and every server sends its final shard once all have.
// A worker that does not complete a step within the deadline after receiving its
// parameters fails run() with DeadlineExceeded naming it.
// Thread-safety: one thread calls run(); the optimizer kernels use OpenMP.
#pragma once

#include <memory>
#include <vector>

#include "comm/process_group.h"
#include "core/status.h"
#include "optim/lr_schedule.h"
#include "optim/optimizer.h"
#include "parallel/param_server/ps_layout.h"
#include "parallel/param_server/ps_messages.h"
#include "parallel/param_server/ps_options.h"
#include "parallel/param_server/ps_stats.h"
#include "backend/backend.h"

namespace zt {

// One update of a synchronous job, as server 0 sees it.
struct PsStepRecord {
  int64_t step = 0;  // 1-based global step
  double loss = 0.0; // mean over the global batch's counted tokens
  double grad_norm = 0.0;
  double lr = 0.0;
};

class PsServer {
 public:
  // ps: every rank of the job, for point-to-point messages (rank = world rank);
  // servers: the servers' group (norms in kSync). Initialises the shard from the seed.
  static StatusOr<std::unique_ptr<PsServer>> create(const PsModelOptions& model, const PsOptions& options,
                                                    const PsLayout& layout, ProcessGroup* ps, ProcessGroup* servers);
  ~PsServer();

  // Serves a job of `steps` global batches (steps x W units) until every worker has its
  // final parameters.
  Status run(int64_t steps);

  const std::vector<PsStepRecord>& step_records() const { return records_; }
  const PsServerStats& stats() const { return stats_; }
  ElementRange range() const { return range_; }
  const float* shard() const { return params_.data(); }
  int64_t version() const { return version_; }

 private:
  struct Peer;
  PsServer(const PsModelOptions& model, const PsOptions& options, const PsLayout& layout, ProcessGroup* ps,
           ProcessGroup* servers);
  Status poll(Peer& p, bool* moved);
  void post_header(Peer& p);
  // ps_server_apply.cc: updates and replies.
  Status apply_push(Peer& p);
  Status apply_sync();
  // The squared norm of the summed gradient over every server's shard (sq: this shard's in,
  // the total out), within the deadline.
  Status reduce_norm(double* sq);
  void fill_reply(Peer& p, int64_t kind, int64_t clock);
  void send_slice(Peer& p, size_t slice, const float* shard_data);
  Status send_replies(bool* moved);
  Status send_finals();
  Status check_deadlines() const;
  int64_t clock() const;  // min pushes applied over working workers (INT64_MAX if none)
  StepHyper hyper_at(int64_t global_step, double norm, double* lr) const;

  PsModelOptions model_;
  PsOptions options_;
  PsMode mode_;
  const PsLayout& layout_;
  ProcessGroup* ps_;
  ProcessGroup* servers_;
  int index_;  // this server's index (= world rank)
  ElementRange range_;
  Arena params_;  // this server's shard, an arena of the backend its optimizers run on
  std::vector<ElementRange> slices_;                    // the shard in reply slices, forward order
  std::vector<std::unique_ptr<Optimizer>> optimizers_;  // one per slice (its state for that slice)
  LrSchedule schedule_;
  std::vector<std::unique_ptr<Peer>> peers_;  // by worker index
  int64_t version_ = 0;
  int64_t total_units_ = 0;
  int64_t next_unit_ = 0;  // server 0: the next unit to hand out
  PullHeader last_{};      // loss / norm / lr of the last update, for replies
  std::vector<PsStepRecord> records_;
  PsServerStats stats_;
};

}  // namespace zt
