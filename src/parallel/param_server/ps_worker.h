// PsWorker: one worker rank of a parameter-server job, the parameter server as a mode of
// the one layer walk (nn/layer_walk.h): the walk reads parameters through PsPulledParams
// (pulled per layer on first use in a step, like a ZeRO-3 gather) and hands gradients to
// PsPushedGrads (pushed per bucket as backward completes them, like GradReducer's
// buckets). The worker adds what is its own:
// - the unit of work server 0 hands out with each reply, and the step's commit (the loss
//   and, in asynchronous modes, the gradient's squared norm) after the last bucket;
// - kSync normalises the loss by the global batch's token count (all-reduced among the
//   workers, overlapping the first forward), exactly as the all-reduce engine does;
//   asynchronous modes by the unit's own count, so each push is the gradient of the
//   unit's mean loss.
// Call sequence: next_unit() -> step() ... until next_unit() returns kNoUnit -> finish()
// (final parameters, identical on every worker) -> evaluate() (optional, collective over
// the workers). Every wait is bounded by 1.5 x the deadline (PsWorkerLink: a silent
// server, or a worker another waits on, stops the job with a message naming it).
// Thread-safety: one thread drives a worker; kernels use OpenMP.
#pragma once

#include <memory>
#include <vector>

#include "comm/process_group.h"
#include "core/status.h"
#include "nn/gpt_model.h"
#include "parallel/param_server/ps_layout.h"
#include "parallel/param_server/ps_messages.h"
#include "parallel/param_server/ps_options.h"
#include "parallel/param_server/ps_stats.h"
#include "parallel/param_server/ps_worker_grads.h"
#include "parallel/param_server/ps_worker_link.h"
#include "parallel/param_server/ps_worker_params.h"
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
    std::vector<float> out(params_->fp32().size());
    model_backend().copy_to_host(out.data(), params_->fp32().data(), params_->fp32().bytes());
    return out;
  }
  const PsWorkerStats& stats() const { return stats_; }

 private:
  PsWorker(const PsModelOptions& model, const PsOptions& options, const PsLayout& layout, ProcessGroup* ps,
           ProcessGroup* workers);
  const Backend& model_backend() const { return backend_or_cpu(model_opts_.backend); }
  // The unit's micro-batches checked; their counted target tokens.
  StatusOr<int64_t> check_batches(const std::vector<MicroBatch>& micro_batches) const;
  // Forward, loss and backward of each micro-batch; the global token count (count_work,
  // sync mode) is awaited after the first forward, which it overlaps.
  Status run_micro_batches(const std::vector<MicroBatch>& micro_batches, const WorkHandle& count_work,
                           double* loss_sum, PsWorkerStep* out);
  // Every reply in, this step's headers and commit sent, the next replies posted.
  Status commit_step(double loss_sum, int64_t local);
  void slow_down();  // the slow-worker test hook

  PsModelOptions model_opts_;
  PsOptions options_;
  PsMode mode_;
  const PsLayout& layout_;
  ProcessGroup* workers_;
  int rank_;   // world rank
  int index_;  // worker index
  PsWorkerLink link_;
  std::unique_ptr<GptModel> model_;
  std::unique_ptr<PsPulledParams> params_;
  std::unique_ptr<PsPushedGrads> grads_;
  PushCommit commit_;
  int64_t count_ = 0;  // the step's token count (all-reduced among workers in kSync)
  int64_t unit_ = kNoUnit;
  int64_t local_step_ = 0;
  bool started_ = false, stopped_ = false, finished_ = false;
  double start_time_ = 0.0;
  PsWorkerStats stats_;
};

}  // namespace zt
