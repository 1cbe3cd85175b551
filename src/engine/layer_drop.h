// Progressive layer drop (DeepSpeed's `progressive_layer_drop`: theta, gamma), as DeepSpeed's
// engine schedules it (runtime/progressive_layer_drop.py) and DeepSpeedExamples' pre-LN
// BERT applies it per layer (docs/design/efficiency.md):
//   theta(t) = (1 - theta_bar) * exp(-gamma * t) + theta_bar after the boundary of step t;
//   the forwards of optimizer step k (k steps done) use theta_used = 1 if k == 0 else
//   theta(k - 1);
//   per block i of L: p_0 = 1, p_{i+1} = p_i - (1 - theta_used) / L (repeated subtraction,
//   in double); block i runs with probability p_i and, when it runs, scales its attention
//   and MLP outputs by 1 / p_{i+1}; a dropped block is the identity.
// The draw: one uniform u per (seed, step, global micro-batch, block) from zerotrain's
// counter-seeded generator, the block kept when u < p_i, so every rank and every layout
// that sees the same global micro-batch draws the same (a resume too).
// Thread-safety: immutable.
#pragma once

#include <cstdint>
#include <vector>

#include "data/efficiency_options.h"
#include "nn/block_route.h"

namespace zt {

class LayerDrop {
 public:
  LayerDrop(const LayerDropOptions& options, int n_layer, uint64_t seed) : o_(options), n_layer_(n_layer), seed_(seed) {}
  double theta_after(int64_t t) const;      // theta(t)
  double theta_used(int64_t steps_done) const;
  std::vector<double> keep_probs(int64_t steps_done) const;  // p_0 .. p_L (L + 1 values)
  // The routes of global micro-batch `micro` in the step after steps_done steps: dropped
  // blocks skip, kept blocks carry their scale.
  std::vector<BlockRoute> routes(int64_t steps_done, int64_t micro) const;

 private:
  LayerDropOptions o_;
  int n_layer_;
  uint64_t seed_;
};

// A generator seeded from several counters (one stream per (seed, step, index, block)).
uint64_t mix_seed(uint64_t seed, uint64_t a, uint64_t b, uint64_t c);

}  // namespace zt
