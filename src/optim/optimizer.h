// Optimizer: updates a contiguous range [begin, end) of the flat parameter arena from
// the same range of the gradient arena, and owns the state for that range only. The
// single-process engine gives it the whole arena; ZeRO gives each rank its shard, which
// is how optimizer state partitioning falls out of offset arithmetic.
// The state may also live outside the optimizer (offload streams it through buffers):
// created without its own state, the optimizer is driven by begin_step() once per step
// and update() over pieces of its range, each with pointers into the state arrays named
// by state_names(). AdamW's and SGD's updates are elementwise, so any cutting gives the
// same bits; LAMB and the 1-bit optimizers need whole tensors (they say so).
// Thread-safety: one thread calls step(); the kernels parallelise internally.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <string>
#include <vector>

#include "core/status.h"
#include "kernels/activation_ops.h"
#include "tensor/tensor_spec.h"

namespace zt {

// kOneBitAdam, kZeroOneAdam, kOneBitLamb compress the data-parallel exchange (onebit_*.h).
enum class OptimizerKind { kAdamW, kSgd, kLamb, kOneBitAdam, kZeroOneAdam, kOneBitLamb };

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

// State of one rank that mirrors no parameter element: the 1-bit optimizers' error
// feedback (each rank's own) and their schedules' counters. Checkpoints keep it in the
// rank's shard and restore it into the same layout only; elsewhere it restarts.
struct RankArray {
  std::string name;  // unique within the optimizer ("worker_error", ...)
  void* data;        // numel fp32 or fp64 elements
  size_t numel;
  bool f64;
};

class Optimizer {
 public:
  virtual ~Optimizer() = default;
  // params and grads point at the first element of the range (arena + range.begin);
  // the optimizer's own state (it must have been created with it).
  void step(float* params, const float* grads, const StepHyper& hyper);
  // The chunked form: the per-step scalars, then elements [offset, offset + n) of the
  // range (offset relative to range().begin); params, grads and states[i] point at
  // element `offset` of their arrays, states in state_names() order.
  virtual void begin_step(const StepHyper& hyper) = 0;
  virtual void update(size_t offset, size_t n, float* params, const float* grads, float* const* states) = 0;
  // update(), then copy (element `offset` of the 16-bit compute copy) = the updated params
  // rounded by half.from_f32, as mixed precision needs after every step. This form runs
  // the two passes; AdamW writes the copy inside its own (half.adamw_step_copy), with the
  // same bits. The copy is not written if the update failed (last_error()).
  virtual void update_copy(size_t offset, size_t n, float* params, const float* grads, float* const* states,
                           half_t* copy, const ActivationOps<half_t>& half);
  // The per-element state arrays this optimizer needs ("exp_avg", ...).
  virtual std::vector<std::string> state_names() const = 0;
  virtual ElementRange range() const = 0;
  virtual size_t state_bytes() const = 0;        // held by the optimizer itself
  virtual std::vector<StateTensor> state() = 0;  // empty when the state lives elsewhere
  virtual int64_t step_count() const = 0;
  virtual void set_step_count(int64_t steps) = 0;
  virtual const char* name() const = 0;
  // False when the coming step's gradients must stay local: the optimizer communicates
  // itself (1-bit Adam after its warm-up). The engine then skips the data-parallel
  // reduction and passes each rank's own gradient, scaled to estimate the average.
  virtual bool engine_reduces_gradients() const { return true; }
  // Views of the rank state (RankArray); after writing into them, rank_state_loaded().
  virtual std::vector<RankArray> rank_state() { return {}; }
  virtual void rank_state_loaded() {}
  // The first failure of the last update() (an optimizer that communicates may fail).
  virtual Status last_error() const { return Status::OK(); }
};

// The parts of [range.begin, range.end) covered by each tensor, with its decay flag.
struct DecaySegment {
  size_t begin;  // relative to range.begin
  size_t end;
  bool decay;
};
std::vector<DecaySegment> decay_segments(const ParamTable& table, ElementRange range);

// Calls f(lo, hi, decay) for the parts of [offset, offset + n) in each segment, lo and
// hi relative to `offset`.
template <typename F>
void for_each_segment(const std::vector<DecaySegment>& segments, size_t offset, size_t n, F&& f) {
  for (const DecaySegment& seg : segments) {
    const size_t lo = std::max(seg.begin, offset), hi = std::min(seg.end, offset + n);
    if (lo < hi) f(lo - offset, hi - offset, seg.decay);
  }
}

}  // namespace zt
