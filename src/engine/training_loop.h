// The step loop of a training run (issue 27 item 1: the engine owns the run). Per step, on
// every rank: this rank's micro-batches from the sampler; the eigenvalue estimate when due
// (before the update); the Trainer's step; the validation loss at eval_interval, at the
// first step run and at the last; every rank's peak RSS when the observer asks for it; the
// observer; the agreement on a stop signal (any rank's SIGTERM/SIGINT/SIGUSR1 stops every
// rank after the same step); and the checkpoint cadence (save_interval, the step a stop was
// agreed on, and the run's last step with save_at_end). Observers (progress, metrics, monitors, profilers) see every step on
// every rank and call no collective: what needs one (peak RSS, validation) the loop does.
// Thread-safety: the training thread; collective over the run's ranks.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "comm/process_group.h"
#include "config/config.h"
#include "data/dataset.h"
#include "engine/trainer.h"

namespace zt {

struct StepEvent {
  const StepStats* stats = nullptr;
  int64_t first_step = 0;        // steps done before this run (a resume's step)
  double seconds = 0.0;          // the step's wall time on this rank (trainer.step)
  double exposed_comm_s = 0.0;   // wall_clock_breakdown: communication in flight and not hidden, during the step
  std::optional<double> val_loss;
  std::vector<double> peak_rss;  // every rank's peak RSS in bytes, when the observer wants it
  std::vector<double> block_param_eigenvalues;  // eigenvalue: DeepSpeed's per-parameter values (else empty)
};

class StepObserver {
 public:
  virtual ~StepObserver() = default;
  virtual bool wants_peak_rss() const { return false; }
  virtual Status on_step(const StepEvent& event) = 0;
  // A line for the run's log (the eigenvalue's verbose lines, a stop); called on every rank.
  virtual void on_message(const std::string& line) = 0;
};

struct TrainingLoop {
  Trainer* trainer = nullptr;
  const ZtConfig* cfg = nullptr;
  const TokenDataset* train = nullptr;
  std::vector<MicroBatch> val;              // the validation batches (empty: no evaluation)
  ProcessGroup* world = nullptr;            // null: one process
  std::vector<ProcessGroup*> comm_groups;   // whose exposed communication time a step reports
  int dp_rank = 0;
  std::function<Status()> save;             // collective: a checkpoint of the current step
};

struct LoopResult {
  int64_t first_step = 0;
  int64_t saved_step = -1;      // the last step checkpointed, -1 for none
  bool stopped = false;         // a stop signal ended the loop (after a checkpoint)
  std::optional<double> last_val;
};

StatusOr<LoopResult> run_training_loop(const TrainingLoop& loop, StepObserver* observer);

// Views of sampled batches as the Trainer's micro-batches (valid while `batches` lives).
std::vector<MicroBatch> as_micro_batches(const std::vector<Batch>& batches);

// Seconds callers have spent blocked on `groups`' operations so far (each group once).
double exposed_comm_seconds(const std::vector<ProcessGroup*>& groups);

// Every rank's peak RSS (collective over g).
StatusOr<std::vector<double>> all_ranks_peak_rss(ProcessGroup& g);

}  // namespace zt
