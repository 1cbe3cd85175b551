// Optimizer: updates a contiguous range [begin, end) of the flat parameter arena from
// the same range of the gradient arena, and owns the state for that range only. The
// single-process engine gives it the whole arena; ZeRO gives each rank its shard, which
// is how optimizer state partitioning falls out of offset arithmetic.
// Thread-safety: one thread calls step(); the kernels parallelise internally.
#pragma once

#include <cmath>
#include <cstddef>
#include <string>
#include <vector>

#include "tensor/tensor_spec.h"

namespace zt {

enum class OptimizerKind { kAdamW, kSgd };

// What changes from step to step, from the schedule and the gradient clipper.
struct StepHyper {
  double lr = 0.0;
  double momentum = NAN;   // OneCycle's cycled momentum (beta1 / SGD momentum); NaN = configured value
  double grad_scale = 1.0; // multiplies every gradient first (clip coefficient)
};

// A named view of optimizer state, for reports and checkpoints.
struct StateTensor {
  std::string name;  // "exp_avg", "exp_avg_sq", "momentum_buffer"
  float* data;
  size_t numel;
};

class Optimizer {
 public:
  virtual ~Optimizer() = default;
  // params and grads point at the first element of the range (arena + range.begin).
  virtual void step(float* params, const float* grads, const StepHyper& hyper) = 0;
  virtual ElementRange range() const = 0;
  virtual size_t state_bytes() const = 0;
  virtual std::vector<StateTensor> state() = 0;
  virtual int64_t step_count() const = 0;
  virtual void set_step_count(int64_t steps) = 0;
  virtual const char* name() const = 0;
};

// The parts of [range.begin, range.end) covered by each tensor, with its decay flag.
struct DecaySegment {
  size_t begin;  // relative to range.begin
  size_t end;
  bool decay;
};
std::vector<DecaySegment> decay_segments(const ParamTable& table, ElementRange range);

}  // namespace zt
