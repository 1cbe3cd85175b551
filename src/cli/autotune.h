// DeepSpeed's autotuning, answered by zerotrain (docs/design/deepspeed-efficiency-rules.md 6):
// `zerotrain train` with autotuning.enabled tunes the ZeRO stage and the micro-batch size
// (DeepSpeed's fast space) before training, then trains with the best:
//   - candidates: the stages the user listed (else the config's stage) x the micro-batch
//     sizes the user listed, else DeepSpeed's list below the largest size that the memory
//     estimator fits in this host's available memory (and max_train_micro_batch_size_per_gpu):
//     from max(min, max / 2) in strides of (max - min) / num_tuning_micro_batch_sizes, the
//     largest always included; gradient accumulation from max_train_batch_size (DeepSpeed's
//     rule) unless the config fixes train_batch_size;
//   - each candidate (up to tuner_num_trials) runs end_profile_step steps of the real data
//     on every rank; its metric is measured over steps start_profile_step..end_profile_step
//     (throughput in samples/s, latency in s per step, the ranks' mean), best wins;
//   - rank 0 writes DeepSpeed's files: <exps_dir>/<name>.json, <results_dir>/<name>/
//     {ds_config.json, metrics.json}, summary.txt, ds_config_optimal.json and
//     cmd_optimal.txt, experiments named z<stage>_gas<gas>_tmbspg<micro> as DeepSpeed's code.
// A resumed run (--resume) takes results_dir/ds_config_optimal.json instead of tuning again,
// so it keeps the tuned batch. Collective over the run's ranks (the trials are Trainers on
// the run's groups).
#pragma once

#include <string>

#include "config/config.h"
#include "core/status.h"
#include "data/dataset.h"
#include "engine/parallel_setup.h"
#include "engine/trainer.h"

namespace zt {

struct AutotuneRun {
  const Json* root = nullptr;           // the config as given
  const ZtConfig* cfg = nullptr;        // its resolution for this world
  const TokenDataset* train = nullptr;
  const ParallelGroups* groups = nullptr;  // null: one process
  const RankGrid* grid = nullptr;
  StagePartition partition = StagePartition::kFlops;
  int rank = 0;
  bool lead = true;
  bool resume = false;  // a resumed run reuses results_dir/ds_config_optimal.json instead of tuning again
};

// The best experiment's configuration (autotuning removed), to train with.
StatusOr<Json> autotune(const AutotuneRun& run);

}  // namespace zt
