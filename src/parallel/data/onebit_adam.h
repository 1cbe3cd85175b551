// 1-bit Adam and 0/1 Adam (DeepSpeed's runtime/fp16/onebit/adam.py and zoadam.py):
// Adam whose data-parallel exchange is the compressed all-reduce of
// onebit_compressor.h after a warm-up, one scale per tensor. As DeepSpeed computes them:
// no bias correction, update = m / (sqrt(v) + eps) + decay * p, p -= lr * update
// (decay only on the tensors whose TensorSpec says so, zerotrain's convention).
//   1-bit Adam: steps 1..freeze_step are Adam on the all-reduced gradient. Then v is
//     frozen and the engine stops reducing gradients: each rank updates m with its own
//     gradient and m itself is compress-all-reduced, every step.
//   0/1 Adam: before var_freeze_step, v is updated (from an all-reduced gradient) only on
//     steps that are multiples of var_interval, which doubles every var_update_scaler
//     such updates; on the other steps the gradient is compress-all-reduced into m. After
//     it, ranks take local steps and synchronise every local_step_interval steps (doubling
//     every local_step_scaler steps up to local_step_clipper) by compress-all-reducing
//     the accumulated update, from which m is rebuilt. zoadam.py keeps the update's sum
//     and undoes it by subtraction, which leaves each replica a rounding apart; here the
//     state array "sync_params" keeps the parameters of the last synchronisation, the
//     move is p - sync_params, and every replica lands on the same bits.
// Differences from DeepSpeed, on purpose: DeepSpeed's very first step only allocates its
// buffers and leaves the parameters unchanged; here it is an ordinary step. The error
// buffers and 0/1 Adam's schedule are checkpointed as rank state (RankArray), so a run
// resumed in the same layout continues bit for bit; DeepSpeed drops the error buffers on
// load, as a resume into another layout does here.
// Invariant: the range is the whole arena of a ZeRO-0 data-parallel replica (the engine
// refuses other layouts), and every replica calls update() once per step.
// Thread-safety: one training thread; collective over the data-parallel group.
#pragma once

#include <memory>
#include <vector>

#include "optim/lamb_options.h"
#include "optim/optimizer.h"
#include "parallel/data/onebit_compressor.h"
#include "tensor/tensor_spec.h"

namespace zt {

class OneBitAdam final : public Optimizer {
 public:
  // zero_one: 0/1 Adam instead of 1-bit Adam. The state arrays live outside (update()).
  OneBitAdam(const ParamTable& table, ElementRange range, const OneBitOptions& options, ProcessGroup* dp,
             bool zero_one);

  void begin_step(const StepHyper& hyper) override;
  void update(size_t offset, size_t n, float* params, const float* grads, float* const* states) override;
  std::vector<std::string> state_names() const override;
  ElementRange range() const override { return range_; }
  size_t state_bytes() const override { return compressor_.error_bytes() + scratch_.size() * sizeof(float); }
  std::vector<StateTensor> state() override { return {}; }
  int64_t step_count() const override { return steps_; }
  void set_step_count(int64_t steps) override { steps_ = steps; }
  const char* name() const override { return zero_one_ ? "ZeroOneAdam" : "OneBitAdam"; }
  std::vector<RankArray> rank_state() override;
  void rank_state_loaded() override;
  bool engine_reduces_gradients() const override;

 private:
  void step_onebit(float* p, const float* g, float* m, float* v);
  void step_zero_one(float* p, const float* g, float* m, float* v, float* anchor);
  void adam_update(float* p, const float* m, const float* v, float lr) const;
  bool frozen(int64_t step) const;
  void note(const Status& s) {
    if (error_.ok() && !s.ok()) error_ = s;
  }

  OneBitOptions o_;
  ElementRange range_;
  std::vector<DecaySegment> segments_;
  bool zero_one_;
  OneBitCompressor compressor_;
  std::vector<float> scratch_;  // the compressed vector (gradient or momentum)
  int64_t steps_ = 0;
  double lr_ = 0.0, grad_scale_ = 1.0, beta1_ = 0.9;
  // 0/1 Adam's schedules (zoadam.py's state, shared by every tensor there too)
  int64_t var_interval_ = 1, var_counter_ = 0;
  int64_t local_interval_ = 1, local_counter_ = 0;
  double lrs_ = 0.0;  // sum of the learning rates since the last synchronisation
  bool errors_reset_ = false;
  std::vector<double> packed_;  // rank_state()'s copy of the schedule above
  Status error_;  // the first communication failure of the last update()

 public:
  Status last_error() const override { return error_; }
};

// The tensors of `table` inside `range`, as segment sizes (one compressor scale each).
std::vector<size_t> tensor_segments(const ParamTable& table, ElementRange range);

}  // namespace zt
