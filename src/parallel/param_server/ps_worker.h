// PsWorker: one worker rank of a parameter-server job. Holds the full parameters (as
// last pulled) and gradients and runs forward/backward on its units of work:
// - Gradients are pushed per bucket as backward produces them (ps_layout.h): each
//   bucket's slice of each server's shard goes out while backward continues; a commit
//   with the loss and (asynchronous modes) the gradient's squared norm follows.
// - The next parameters are pulled per shard in reply slices (PsLayout::reply_slices),
//   waited for lazily: the forward of a layer waits only for the slices that hold it, so
//   the first layers compute while the later slices are still being updated or sent.
// - kSync normalises the loss by the global batch's token count (all-reduced among the
//   workers first), exactly as the all-reduce engine does; asynchronous modes by the
//   unit's own count, so each push is the gradient of the unit's mean loss.
// Call sequence: next_unit() -> step() ... until next_unit() returns kNoUnit -> finish()
// (final parameters, identical on every worker) -> evaluate() (optional, collective over
// the workers). Every wait is bounded by 1.5 x the deadline (a silent server, or a worker
// another waits on, stops the job with a message naming it).
// Thread-safety: one thread drives a worker; kernels use OpenMP.
#pragma once

#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "comm/process_group.h"
#include "core/status.h"
#include "nn/gpt_model.h"
#include "parallel/param_server/ps_layout.h"
#include "parallel/param_server/ps_messages.h"
#include "parallel/param_server/ps_options.h"
#include "parallel/param_server/ps_stats.h"
#include "backend/backend.h"

namespace zt {

struct PsWorkerStep {
  int64_t unit = 0;
  int64_t local_step = 0;  // 1-based: steps this worker has computed
  double loss = 0.0;       // mean over the unit's counted tokens
  int64_t tokens = 0;
  double forward_s = 0.0;  // includes waiting for parameters the forward reached first
  double backward_s = 0.0;
  double pull_wait_s = 0.0;
  PullHeader server0;  // what server 0 last replied: its global step, loss and lr
};

class PsWorker {
 public:
  // ps: every rank of the job (rank = world rank); workers: the workers' group.
  static StatusOr<std::unique_ptr<PsWorker>> create(const PsModelOptions& model, const PsOptions& options,
                                                    const PsLayout& layout, ProcessGroup* ps, ProcessGroup* workers);
  ~PsWorker();

  int index() const { return index_; }  // worker index, 0..W-1
  // The unit the next step computes, or kNoUnit: the job's units are spent (call finish()).
  StatusOr<int64_t> next_unit();
  // One step on the unit's grad_accum micro-batches.
  StatusOr<PsWorkerStep> step(const std::vector<MicroBatch>& micro_batches);
  // After next_unit() returned kNoUnit: receives the final parameters.
  Status finish();
  // Mean loss over the counted tokens of `batches` (the same list on every worker; each
  // evaluates its share). Collective over the workers; after finish().
  StatusOr<double> evaluate(const std::vector<MicroBatch>& batches);

  const ParamTable& param_table() const { return model_->param_table(); }
  // The worker's fp32 parameters, copied out of the backend's memory.
  std::vector<float> host_params() const {
    std::vector<float> out(params_.size());
    model_backend().copy_to_host(out.data(), params_.data(), params_.bytes());
    return out;
  }
  const PsWorkerStats& stats() const { return stats_; }

 private:
  PsWorker(const PsModelOptions& model, const PsOptions& options, const PsLayout& layout, ProcessGroup* ps,
           ProcessGroup* workers);
  // Waits for `work`, which depends on server `server` (-1: on the other workers): a
  // quarter of the deadline in, tells the other servers (note_blocked); past 1.5 x the
  // deadline, DeadlineExceeded(what(elapsed)).
  Status wait(const WorkHandle& work, int server, const std::function<std::string(double)>& what);
  void note_blocked(int server);
  Status receive_header(int server);  // the header of server's reply to the last push
  // The reply's slices that intersect `range` (after its header).
  Status receive_range(int server, ElementRange range);
  Status receive_pull(int server);    // the whole reply
  void publish(ElementRange range);  // bf16: params_ -> compute_ over range
  const Backend& model_backend() const { return backend_or_cpu(model_opts_.backend); }
  void send_step_header(int server);  // once per step, after the server's reply header
  Status ensure_layer(int layer);     // the parameters of `layer` are in
  Status forward_micro(const MicroBatch& mb, bool first, double* loss_sum);
  // The unit's micro-batches checked; their counted target tokens.
  StatusOr<int64_t> check_batches(const std::vector<MicroBatch>& micro_batches) const;
  // Forward and backward of each micro-batch; the global token count (count_work, sync
  // mode) is awaited after the first forward, which it overlaps.
  Status run_micro_batches(const std::vector<MicroBatch>& micro_batches, const WorkHandle& count_work,
                           double* loss_sum, PsWorkerStep* out);
  Status backward_micro(const MicroBatch& mb, float dloss, bool push);
  void layer_done(int layer);
  void post_pulls();
  Status wait_sends();

  PsModelOptions model_opts_;
  PsOptions options_;
  PsMode mode_;
  const PsLayout& layout_;
  ProcessGroup* ps_;
  ProcessGroup* workers_;
  int rank_;   // world rank
  int index_;  // worker index
  std::unique_ptr<GptModel> model_;
  Arena params_;  // the model's parameters and gradients: arenas of the model's backend
  Arena grads_;
  Arena compute_;  // bf16: the 16-bit copy the model reads, cast from params_ per layer as it arrives
  // Per server: the pending reply (a header, then the shard's reply slices), and what
  // this step told it.
  struct Pull {
    PullHeader header;
    WorkHandle header_work;
    bool header_in = true;
    std::vector<WorkHandle> slices;
    std::vector<bool> slice_in;
  };
  std::vector<Pull> pulls_;
  std::vector<bool> header_sent_;
  std::vector<int64_t> read_version_, read_clock_;
  std::vector<StepHeader> step_header_;
  PushCommit commit_;
  int64_t count_ = 0;  // the step's token count (all-reduced among workers in kSync)
  std::vector<std::pair<int, WorkHandle>> sends_;  // this step's outgoing messages, by server
  std::deque<PsNote> notes_;                       // notes sent (stable addresses)
  std::vector<WorkHandle> note_works_;
  std::vector<int> bucket_pending_;
  PullHeader server0_;
  int64_t unit_ = kNoUnit;
  int64_t local_step_ = 0;
  bool started_ = false, stopped_ = false, finished_ = false;
  double start_time_ = 0.0;
  PsWorkerStats stats_;
};

}  // namespace zt
