// Trainer: one process trains a GptModel — the reference every distributed mode is
// compared against. Owns the parameter and gradient arenas (one TensorSpec layout), the
// optimizer and the LR schedule; one step() is gradient accumulation over the step's
// micro-batches, global-norm clipping, and the optimizer update.
//
// Loss normalisation: a step's loss is the mean over every counted (non-ignored) target
// token of all its micro-batches, so it does not depend on how the global batch is cut
// into micro-batches or ranks. With no ignored tokens this equals DeepSpeed's mean of
// per-micro-batch means.
// Thread-safety: single-threaded driver; kernels use OpenMP internally.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "core/status.h"
#include "nn/gpt_model.h"
#include "optim/adamw.h"
#include "optim/lr_schedule.h"
#include "optim/optimizer.h"
#include "optim/sgd.h"
#include "tensor/buffer.h"

namespace zt {

struct TrainerOptions {
  GptConfig model;
  int micro_batch = 4;         // sequences per micro-batch
  int seq_len = 64;            // tokens per sequence
  OptimizerKind optimizer = OptimizerKind::kAdamW;
  AdamWOptions adamw;
  SgdOptions sgd;
  LrScheduleOptions schedule;  // schedule.base_lr is the optimizer's lr
  double gradient_clipping = 1.0;  // max global norm; 0 disables (DeepSpeed's default is 1.0)
  uint64_t seed = 1234;
};

// One micro-batch: micro_batch x seq_len inputs and targets (-1 = ignore).
struct MicroBatch {
  const int32_t* tokens;
  const int32_t* targets;
};

struct StepStats {
  int64_t step = 0;          // optimizer steps completed, including this one
  double loss = 0.0;         // mean over counted tokens
  double grad_norm = 0.0;    // global L2 norm before clipping
  double lr = 0.0;
  int64_t tokens = 0;        // tokens processed (inputs, ignored or not)
  double forward_s = 0.0;    // forward + loss
  double backward_s = 0.0;
  double optimizer_s = 0.0;  // norm, clipping and update
};

struct MemoryReport {
  size_t param_bytes = 0;
  size_t grad_bytes = 0;
  size_t optimizer_bytes = 0;
  size_t activation_bytes = 0;
  size_t peak_rss_bytes = 0;
};

class Trainer {
 public:
  // Validates the options (model shape, batch shape) and initialises parameters.
  static StatusOr<std::unique_ptr<Trainer>> create(const TrainerOptions& options);

  // One optimizer step over the given micro-batches (gradient accumulation = their count).
  StatusOr<StepStats> step(const std::vector<MicroBatch>& micro_batches);

  // Mean loss over counted tokens, forward only (validation). Parameters unchanged.
  StatusOr<double> evaluate(const std::vector<MicroBatch>& micro_batches);

  MemoryReport memory() const;
  GptModel& model() { return *model_; }
  FloatBuffer& params() { return params_; }
  FloatBuffer& grads() { return grads_; }
  Optimizer& optimizer() { return *optimizer_; }
  const TrainerOptions& options() const { return options_; }
  int64_t global_step() const { return global_step_; }
  // For resuming: the number of optimizer steps already taken (drives the LR schedule).
  void set_global_step(int64_t step) { global_step_ = step; }
  // The learning rate the next step will use.
  double next_lr() const { return schedule_.at(global_step_ - 1).lr; }

 private:
  explicit Trainer(const TrainerOptions& options);

  TrainerOptions options_;
  std::unique_ptr<GptModel> model_;
  FloatBuffer params_;
  FloatBuffer grads_;
  std::unique_ptr<Optimizer> optimizer_;
  LrSchedule schedule_;
  int64_t global_step_ = 0;
};

}  // namespace zt
