// What every GPT training loop is given, whichever way it spreads the work: the model and
// how it is optimised (GptTrainingOptions, which the all-reduce Trainer's and the
// parameter-server job's options both extend), and one micro-batch (MicroBatch).
// Thread-safety: plain values.
#pragma once

#include <cstdint>

#include "backend/backend.h"
#include "nn/gpt_config.h"
#include "optim/adamw.h"
#include "optim/lamb_options.h"
#include "optim/loss_scaler.h"
#include "optim/lr_schedule.h"
#include "optim/optimizer.h"
#include "optim/sgd.h"

namespace zt {

struct GptTrainingOptions {
  GptConfig model;
  const Backend* backend = nullptr;  // device and kernels for the model and optimizer; null = cpu_backend()
  int micro_batch = 4;  // sequences per micro-batch on this rank
  int seq_len = 64;     // tokens per sequence
  OptimizerKind optimizer = OptimizerKind::kAdamW;
  AdamWOptions adamw;
  SgdOptions sgd;
  LambOptions lamb;      // OptimizerKind::kLamb
  OneBitOptions onebit;  // kOneBitAdam, kZeroOneAdam, kOneBitLamb
  LrScheduleOptions schedule;       // schedule.base_lr is the optimizer's lr
  double gradient_clipping = 1.0;  // max global norm; 0 disables (DeepSpeed's default is 1.0)
  LossScalerOptions loss_scaler;   // used when the backend computes in f16 (DeepSpeed's fp16 section)
  uint64_t seed = 1234;
};

// One micro-batch: micro_batch x seq_len inputs and targets (-1 = ignore).
struct MicroBatch {
  const int32_t* tokens;
  const int32_t* targets;
};

}  // namespace zt
