// timed_trial (timed_trial.h): a fresh Trainer, the sampler's batches, a stopwatch, and
// the job's sum of the timed seconds.
#include "engine/timed_trial.h"

#include "core/timer.h"
#include "engine/rank_sync.h"
#include "engine/run_config.h"
#include "engine/trainer.h"
#include "engine/training_loop.h"

namespace zt {

StatusOr<double> timed_trial(const ZtConfig& cfg, const TrialPlacement& at, const TokenDataset& train, int64_t steps,
                             int64_t first_timed) {
  TrainerOptions o = trainer_options(cfg);
  ZT_ASSIGN_OR_RETURN(o.layout, layout_for_rank(cfg.model, *at.grid, at.rank, at.partition, cfg.parallel.virtual_stages));
  ZT_ASSIGN_OR_RETURN(auto t, Trainer::create(o, at.groups));
  BatchSampler sampler(&train, cfg.training.seed, cfg.batch.train_batch_size, static_cast<int>(cfg.batch.micro_batch),
                       static_cast<int>(cfg.batch.grad_accum));
  const int dp_rank = t->data_rank();
  double timed = 0.0;
  for (int64_t step = 0; step < steps; ++step) {
    std::vector<Batch> batches;
    for (int m = 0; m < cfg.batch.grad_accum; ++m) batches.push_back(sampler.micro_batch(step, dp_rank, m));
    Stopwatch sw;
    ZT_RETURN_IF_ERROR(t->step(as_micro_batches(batches)).status());
    if (step + 1 >= first_timed) timed += sw.seconds();
  }
  ZT_ASSIGN_OR_RETURN(const double total, sum_over_ranks(at.groups != nullptr ? at.groups->world : nullptr, timed));
  return total / at.grid->world_size() / static_cast<double>(steps - first_timed + 1);
}

}  // namespace zt
