// 1-bit Adam and 0/1 Adam (onebit_adam.h): the per-step logic of DeepSpeed's adam.py
// and zoadam.py over the flat range, one compressor segment per tensor.
#include "parallel/data/onebit_adam.h"

#include <algorithm>
#include <cmath>

namespace zt {

std::vector<size_t> tensor_segments(const ParamTable& table, ElementRange range) {
  std::vector<size_t> out;
  for (const TensorSpec& s : table.specs()) {
    const size_t lo = std::max(s.offset, range.begin), hi = std::min(s.offset + s.numel, range.end);
    if (lo < hi) out.push_back(hi - lo);
  }
  return out;
}

OneBitAdam::OneBitAdam(const ParamTable& table, ElementRange range, const OneBitOptions& options, ProcessGroup* dp,
                       bool zero_one)
    : o_(options),
      range_(range),
      segments_(decay_segments(table, range)),
      zero_one_(zero_one),
      compressor_(dp, tensor_segments(table, range)),
      scratch_(range.size(), 0.0f) {}

// The schedule as one fp64 array (exact for counts below 2^53), after the error buffers.
std::vector<RankArray> OneBitAdam::rank_state() {
  packed_ = {static_cast<double>(var_interval_),   static_cast<double>(var_counter_), static_cast<double>(local_interval_),
             static_cast<double>(local_counter_), lrs_,                              errors_reset_ ? 1.0 : 0.0};
  std::vector<RankArray> out = compressor_.error_arrays();
  out.push_back({"schedule", packed_.data(), packed_.size(), true});
  return out;
}

void OneBitAdam::rank_state_loaded() {
  var_interval_ = static_cast<int64_t>(packed_[0]);
  var_counter_ = static_cast<int64_t>(packed_[1]);
  local_interval_ = static_cast<int64_t>(packed_[2]);
  local_counter_ = static_cast<int64_t>(packed_[3]);
  lrs_ = packed_[4];
  errors_reset_ = packed_[5] != 0.0;
}

std::vector<std::string> OneBitAdam::state_names() const {
  if (zero_one_) return {"exp_avg", "exp_avg_sq", "sync_params"};
  return {"exp_avg", "exp_avg_sq"};
}

// 1-bit Adam freezes after step freeze_step; 0/1 Adam after the step following
// var_freeze_step (zoadam.py sets its freeze flag at the end of a step > var_freeze_step).
bool OneBitAdam::frozen(int64_t step) const {
  return zero_one_ ? step - 1 > o_.var_freeze_step : step > o_.freeze_step;
}

bool OneBitAdam::engine_reduces_gradients() const {
  const int64_t next = steps_ + 1;
  if (!zero_one_) return !frozen(next);
  return !frozen(next) && next % var_interval_ == 0;
}

void OneBitAdam::begin_step(const StepHyper& hyper) {
  ++steps_;
  lr_ = hyper.lr;
  grad_scale_ = hyper.grad_scale;
  beta1_ = std::isnan(hyper.momentum) ? o_.base.beta1 : hyper.momentum;
  error_ = Status::OK();
}

// p -= lr * (m / (sqrt(v) + eps) + decay * p).
void OneBitAdam::adam_update(float* p, const float* m, const float* v, float lr) const {
  const float eps = static_cast<float>(o_.base.eps), wd = static_cast<float>(o_.base.weight_decay);
  for (const DecaySegment& seg : segments_) {
    const float decay = seg.decay ? wd : 0.0f;
    const int64_t lo = static_cast<int64_t>(seg.begin), hi = static_cast<int64_t>(seg.end);
#pragma omp parallel for schedule(static)
    for (int64_t i = lo; i < hi; ++i) {
      const float u = m[i] / (std::sqrt(v[i]) + eps) + decay * p[i];
      p[i] -= lr * u;
    }
  }
}

void OneBitAdam::update(size_t offset, size_t n, float* params, const float* grads, float* const* states) {
  ZT_CHECK(offset == 0 && n == range_.size(), "1-bit optimizers update their whole range in one call");
  if (zero_one_) {
    step_zero_one(params, grads, states[0], states[1], states[2]);
  } else {
    step_onebit(params, grads, states[0], states[1]);
  }
}

void OneBitAdam::step_onebit(float* p, const float* g, float* m, float* v) {
  const float b1 = static_cast<float>(beta1_), b2 = static_cast<float>(o_.base.beta2);
  const float gs = static_cast<float>(grad_scale_);
  const int64_t N = static_cast<int64_t>(range_.size());
  if (!frozen(steps_)) {  // warm-up: Adam on the all-reduced gradient
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < N; ++i) {
      const float gi = g[i] * gs;
      m[i] = b1 * m[i] + (1.0f - b1) * gi;
      v[i] = b2 * v[i] + (1.0f - b2) * gi * gi;
    }
  } else {  // local momentum, then its compressed average
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < N; ++i) m[i] = b1 * m[i] + (1.0f - b1) * g[i] * gs;
    note(compressor_.all_reduce(m));
  }
  adam_update(p, m, v, static_cast<float>(lr_));
}

void OneBitAdam::step_zero_one(float* p, const float* g, float* m, float* v, float* anchor) {
  const float b1 = static_cast<float>(beta1_), b2 = static_cast<float>(o_.base.beta2);
  const float gs = static_cast<float>(grad_scale_), eps = static_cast<float>(o_.base.eps);
  const int64_t N = static_cast<int64_t>(range_.size());
  const int64_t t = steps_;
  if (!frozen(t)) {
    if (t % var_interval_ == 0) {  // the engine all-reduced this step's gradient
#pragma omp parallel for schedule(static)
      for (int64_t i = 0; i < N; ++i) {
        const float gi = g[i] * gs;
        v[i] = b2 * v[i] + (1.0f - b2) * gi * gi;
        m[i] = b1 * m[i] + (1.0f - b1) * gi;
      }
      if (++var_counter_ == o_.var_update_scaler) {
        var_counter_ = 0;
        var_interval_ *= 2;
      }
    } else {  // the compressed average of the gradients
#pragma omp parallel for schedule(static)
      for (int64_t i = 0; i < N; ++i) scratch_[static_cast<size_t>(i)] = g[i] * gs;
      note(compressor_.all_reduce(scratch_.data()));
#pragma omp parallel for schedule(static)
      for (int64_t i = 0; i < N; ++i) m[i] = b1 * m[i] + (1.0f - b1) * scratch_[static_cast<size_t>(i)];
    }
    adam_update(p, m, v, static_cast<float>(lr_));
    return;
  }
  if (!errors_reset_) {  // zoadam.py zeroes the error feedback once at the freeze
    compressor_.reset_errors();
    errors_reset_ = true;
    std::copy(p, p + N, anchor);  // the replicas agree here
  }
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < N; ++i) m[i] = b1 * m[i] + (1.0f - b1) * g[i] * gs;
  lrs_ += lr_;
  adam_update(p, m, v, static_cast<float>(lr_));  // a local step
  if (t % local_interval_ == 0) {  // synchronise: the average of the local moves since the anchor
    float* d = scratch_.data();
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < N; ++i) d[i] = (p[i] - anchor[i]) * (std::sqrt(v[i]) + eps);
    note(compressor_.all_reduce(d));
    const float inv_lrs = static_cast<float>(1.0 / lrs_);
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < N; ++i) {
      m[i] = -d[i] * inv_lrs;
      p[i] = anchor[i] + d[i] / (std::sqrt(v[i]) + eps);
      anchor[i] = p[i];
    }
    lrs_ = 0.0;
  }
  if (++local_counter_ == o_.local_step_scaler) {
    local_counter_ = 0;
    local_interval_ = std::min(o_.local_step_clipper, local_interval_ * 2);
  }
}

}  // namespace zt
