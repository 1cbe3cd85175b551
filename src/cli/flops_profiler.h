// DeepSpeed's flops_profiler (deepspeed/profiling/flops_profiler): at step profile_step,
// rank 0 prints (or writes to output_file) the profile of its part of one training step:
// the summary (ranks, batch, parameters, FLOPs, forward / backward / optimizer / step
// latency, FLOP/s, MFU), the top_modules modules per depth up to module_depth by
// parameters, FLOPs and latency, and, when detailed, one row per module.
// Modules: depth 0 the model; depth 1 the embeddings (wte+wpe), each block h.i, the head
// (ln_f, the tied LM head and the loss), the wait for the last gradient reductions and
// the optimizer step. FLOPs are the closed form MFU uses (nn/gpt_config.h,
// flops_per_token: 6 per parameter per token for the blocks' and the head's matrices,
// 12 C T per token per block for attention; the embeddings' lookups count 0), so the
// modules sum to the model's FLOPs exactly. Latencies are measured (Trainer::
// layer_times(): forward plus backward, ZeRO-3 fetch waits included), so they sum to
// the measured step up to the loss all-reduce and the bookkeeping between layers.
// Not available with pipeline parallelism (the configuration refuses it).
// Thread-safety: the training thread of rank 0.
#pragma once

#include <string>

#include "config/config.h"
#include "engine/trainer.h"
#include "parallel/grid.h"

namespace zt {

struct StepMeasure {
  int64_t step = 0;
  double step_s = 0.0;       // the step's wall time
  double optimizer_s = 0.0;  // StepStats::optimizer_s
  double peak_flops = 0.0;   // this rank's FMA peak, FLOP/s (0: unknown)
  int world = 1, dp = 1;
};

std::string flops_profile(const ZtConfig& config, const Trainer& trainer, const StepMeasure& m);

// After each step on rank 0: the flops profile at profile_step (to output_file or
// stdout), and with comms_logger.verbose the communication table every print_every
// steps.
Status log_profilers(const ZtConfig& config, Trainer& trainer, const ParallelGroups& groups, const StepMeasure& m,
                     int64_t print_every);

}  // namespace zt
