// The step loop of a training run; see training_loop.h.
#include "engine/training_loop.h"

#include <cmath>
#include <set>

#include "core/memory_stats.h"
#include "core/timer.h"
#include "engine/eigenvalue_step.h"
#include "engine/stop_signal.h"

namespace zt {

namespace {

// The validation loss when this step is due one (eval_interval, the first step run, the last).
StatusOr<std::optional<double>> maybe_evaluate(const TrainingLoop& loop, int64_t step, int64_t first_step) {
  const TrainingConfig& tc = loop.cfg->training;
  const bool due = (tc.eval_interval > 0 && step % tc.eval_interval == 0) || step == tc.steps || step == first_step + 1;
  if (loop.val.empty() || !due) return std::optional<double>();
  ZT_ASSIGN_OR_RETURN(const double v, loop.trainer->evaluate(loop.val));
  return std::optional<double>(v);
}

// One step: the estimate when due, the update, the event's measurements.
StatusOr<StepStats> one_step(const TrainingLoop& loop, const std::vector<MicroBatch>& micro, EigenvalueStep* eigen,
                             StepObserver* observer, StepEvent* e) {
  const auto log = [observer](const std::string& line) { observer->on_message(line); };
  ZT_ASSIGN_OR_RETURN(e->block_param_eigenvalues, eigen->run(loop.trainer->global_step() + 1, micro, log));
  const bool breakdown = loop.cfg->wall_clock_breakdown;
  const double exposed0 = breakdown ? exposed_comm_seconds(loop.comm_groups) : 0.0;
  Stopwatch clock;
  ZT_ASSIGN_OR_RETURN(StepStats stats, loop.trainer->step(micro));
  e->seconds = clock.seconds();
  if (breakdown) e->exposed_comm_s = exposed_comm_seconds(loop.comm_groups) - exposed0;
  if (!std::isfinite(stats.loss)) return Status::Internal("non-finite loss at step " + std::to_string(stats.step));
  return stats;
}

}  // namespace

StatusOr<LoopResult> run_training_loop(const TrainingLoop& loop, StepObserver* observer) {
  const ZtConfig& cfg = *loop.cfg;
  const TrainingConfig& tc = cfg.training;
  LoopResult r;
  r.first_step = loop.trainer->global_step();
  BatchSampler sampler(loop.train, tc.seed, cfg.batch.train_batch_size, static_cast<int>(cfg.batch.micro_batch),
                       static_cast<int>(cfg.batch.grad_accum));
  EigenvalueStep eigen(cfg, loop.trainer);
  install_stop_handlers();
  ProcessGroup& world = loop.world != nullptr ? *loop.world : loop.trainer->dp();
  for (int64_t step = r.first_step; step < tc.steps && !r.stopped; ++step) {
    std::vector<Batch> batches;
    for (int m = 0; m < cfg.batch.grad_accum; ++m) batches.push_back(sampler.micro_batch(step, loop.dp_rank, m));
    StepEvent e;
    e.first_step = r.first_step;
    ZT_ASSIGN_OR_RETURN(const StepStats stats, one_step(loop, as_micro_batches(batches), &eigen, observer, &e));
    e.stats = &stats;
    ZT_ASSIGN_OR_RETURN(e.val_loss, maybe_evaluate(loop, stats.step, r.first_step));
    if (e.val_loss) r.last_val = e.val_loss;
    if (observer->wants_peak_rss()) {
      ZT_ASSIGN_OR_RETURN(e.peak_rss, all_ranks_peak_rss(world));
    }
    ZT_RETURN_IF_ERROR(observer->on_step(e));
    ZT_ASSIGN_OR_RETURN(r.stopped, any_rank_stopping(loop.world));
    if (r.stopped || (tc.save_interval > 0 && stats.step % tc.save_interval == 0)) {
      if (r.stopped) observer->on_message("stop signal received: checkpointing at step " + std::to_string(stats.step));
      ZT_RETURN_IF_ERROR(loop.save());
      r.saved_step = stats.step;
    }
  }
  // The end of the run: its last step checkpointed (save_at_end), unless it already was.
  const int64_t last = loop.trainer->global_step();
  if (tc.save_at_end && last > r.first_step && r.saved_step != last) {
    ZT_RETURN_IF_ERROR(loop.save());
    r.saved_step = last;
  }
  return r;
}

std::vector<MicroBatch> as_micro_batches(const std::vector<Batch>& batches) {
  std::vector<MicroBatch> out;
  for (const Batch& b : batches) out.push_back({b.tokens.data(), b.targets.data()});
  return out;
}

double exposed_comm_seconds(const std::vector<ProcessGroup*>& groups) {
  std::set<const ProcessGroup*> seen;  // by whose counters they are (a staged group reports its inner group's)
  double s = 0.0;
  for (ProcessGroup* g : groups) {
    if (g != nullptr && seen.insert(g->stats_owner()).second) s += g->stats().exposed_seconds;
  }
  return s;
}

StatusOr<std::vector<double>> all_ranks_peak_rss(ProcessGroup& g) {
  std::vector<double> rss(static_cast<size_t>(g.size()), 0.0);
  rss[static_cast<size_t>(g.rank())] = static_cast<double>(peak_rss_bytes());
  if (g.size() > 1) ZT_RETURN_IF_ERROR(g.all_reduce(rss.data(), rss.size(), CommDType::kF64)->wait());
  return rss;
}

}  // namespace zt
