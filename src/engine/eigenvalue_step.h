// The eigenvalue block in the training loop: on every step whose number (1-based) is a
// multiple of gas_boundary_resolution, before that step's update, each block's dominant
// Hessian eigenvalue on the step's micro-batches (engine/hessian_probe.h), as DeepSpeed
// computes it at the gradient-accumulation boundary. With verbose, DeepSpeed's log lines
// ("block: b, power iteration: i, eigenvalue: v" and the post-processed list) go to `log`
// on every rank. Collective over the data-parallel group.
// Thread-safety: the training thread.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "config/config.h"
#include "engine/hessian_probe.h"
#include "engine/trainer.h"

namespace zt {

class EigenvalueStep {
 public:
  EigenvalueStep(const ZtConfig& cfg, Trainer* trainer) : cfg_(cfg), trainer_(trainer) {}
  // The per-parameter values for the monitors (eigenvalues_per_parameter); empty on steps
  // that do not estimate or when the block is disabled. `step` is 1-based.
  StatusOr<std::vector<double>> run(int64_t step, const std::vector<MicroBatch>& micro,
                                    const std::function<void(const std::string&)>& log);

 private:
  const ZtConfig& cfg_;
  Trainer* trainer_;
  std::unique_ptr<HessianProbe> probe_;
};

}  // namespace zt
