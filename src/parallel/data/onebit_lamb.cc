// 1-bit LAMB (onebit_lamb.h): lamb.py's two phases, per tensor of the flat range.
#include "parallel/data/onebit_lamb.h"

#include <algorithm>
#include <cmath>

namespace zt {

OneBitLamb::OneBitLamb(const ParamTable& table, ElementRange range, const OneBitOptions& options, ProcessGroup* dp)
    : o_(options), range_(range), compressor_(dp, {range.size()}), last_m_(range.size(), 0.0f) {
  for (const TensorSpec& s : table.specs()) {
    const size_t lo = std::max(s.offset, range.begin), hi = std::min(s.offset + s.numel, range.end);
    if (lo < hi) tensors_.push_back(Tensor{lo - range.begin, hi - lo, s.weight_decay});
  }
}

void OneBitLamb::begin_step(const StepHyper& hyper) {
  ++steps_;
  lr_ = hyper.lr;
  grad_scale_ = hyper.grad_scale;
  beta1_ = std::isnan(hyper.momentum) ? o_.base.beta1 : hyper.momentum;
  error_ = Status::OK();
}

void OneBitLamb::update(size_t offset, size_t n, float* params, const float* grads, float* const* states) {
  ZT_CHECK(offset == 0 && n == range_.size(), "1-bit optimizers update their whole range in one call");
  if (steps_ <= o_.freeze_step) {
    warmup_step(params, grads, states[0], states[1], states[2]);
  } else {
    compressed_step(params, grads, states[0], states[1], states[2]);
  }
}

void OneBitLamb::warmup_step(float* p, const float* g, float* m, float* v, float* v_fresh) {
  const float b1 = static_cast<float>(beta1_), b2 = static_cast<float>(o_.base.beta2);
  const float gs = static_cast<float>(grad_scale_), eps = static_cast<float>(o_.base.eps);
#pragma omp parallel for schedule(dynamic, 1)
  for (size_t k = 0; k < tensors_.size(); ++k) {
    Tensor& t = tensors_[k];
    const float decay = t.decay ? static_cast<float>(o_.base.weight_decay) : 0.0f;
    double wsq = 0.0, usq = 0.0;
    for (size_t i = t.begin; i < t.begin + t.n; ++i) {
      const float gi = g[i] * gs;
      m[i] = b1 * m[i] + (1.0f - b1) * gi;
      v[i] = b2 * v[i] + (1.0f - b2) * gi * gi;
      if (steps_ == o_.freeze_step) v_fresh[i] = v[i];
      const float u = m[i] / (std::sqrt(v[i]) + eps) + decay * p[i];
      wsq += static_cast<double>(p[i]) * p[i];
      usq += static_cast<double>(u) * u;
    }
    double c = 1.0;
    if (wsq != 0.0 && usq != 0.0) c = std::clamp(std::sqrt(wsq / usq), o_.base.min_coeff, o_.base.max_coeff);
    if (c != 1.0) t.coeff_freeze = o_.coeff_beta * t.coeff_freeze + (1.0 - o_.coeff_beta) * c;
    const float step = static_cast<float>(lr_ * c);
    for (size_t i = t.begin; i < t.begin + t.n; ++i) p[i] -= step * (m[i] / (std::sqrt(v[i]) + eps) + decay * p[i]);
  }
}

std::vector<RankArray> OneBitLamb::rank_state() {
  packed_ = {scaled_ ? 1.0 : 0.0};
  for (const Tensor& t : tensors_) packed_.insert(packed_.end(), {t.coeff_freeze, t.last_factor, t.scaling});
  std::vector<RankArray> out = compressor_.error_arrays();
  out.push_back({"tensor_coefficients", packed_.data(), packed_.size(), true});
  return out;
}

void OneBitLamb::rank_state_loaded() {
  scaled_ = packed_[0] != 0.0;
  for (size_t k = 0; k < tensors_.size(); ++k) {
    tensors_[k].coeff_freeze = packed_[1 + 3 * k];
    tensors_[k].last_factor = packed_[2 + 3 * k];
    tensors_[k].scaling = packed_[3 + 3 * k];
  }
}

void OneBitLamb::compressed_step(float* p, const float* g, float* m, float* v, float* v_fresh) {
  const float b1 = static_cast<float>(beta1_), b2 = static_cast<float>(o_.base.beta2);
  const float gs = static_cast<float>(grad_scale_);
  if (!scaled_) {  // scaling_coeff: the mean rms of the tensors' momenta over each one's own
    double sum = 0.0;
    std::vector<double> rms(tensors_.size());
    for (size_t k = 0; k < tensors_.size(); ++k) {
      double sq = 0.0;
      for (size_t i = tensors_[k].begin; i < tensors_[k].begin + tensors_[k].n; ++i) sq += double(m[i]) * m[i];
      rms[k] = std::sqrt(sq / static_cast<double>(tensors_[k].n));
      sum += rms[k];
    }
    const double united = sum / static_cast<double>(tensors_.size());
    for (size_t k = 0; k < tensors_.size(); ++k) tensors_[k].scaling = rms[k] > 0.0 ? united / rms[k] : 1.0;
    scaled_ = true;
  }
#pragma omp parallel for schedule(dynamic, 1)
  for (size_t k = 0; k < tensors_.size(); ++k) {
    const Tensor& t = tensors_[k];
    const float s = static_cast<float>(t.scaling);
    for (size_t i = t.begin; i < t.begin + t.n; ++i) {
      last_m_[i] = m[i];
      m[i] = (b1 * m[i] + (1.0f - b1) * g[i] * gs) * s;
    }
  }
  error_ = compressor_.all_reduce(m);
#pragma omp parallel for schedule(dynamic, 1)
  for (size_t k = 0; k < tensors_.size(); ++k) {
    Tensor& t = tensors_[k];
    const float s = static_cast<float>(t.scaling);
    for (size_t i = t.begin; i < t.begin + t.n; ++i) {
      m[i] /= s;
      const float gr = (m[i] - last_m_[i] * b1) / (1.0f - b1);
      v_fresh[i] = b2 * v_fresh[i] + (1.0f - b2) * gr * gr;
    }
    const double c = frozen_ratio(t, p, m, v, v_fresh);
    const float step = static_cast<float>(lr_ * c);
    const float decay = t.decay ? static_cast<float>(o_.base.weight_decay) : 0.0f;
    const float eps = static_cast<float>(o_.base.eps);
    for (size_t i = t.begin; i < t.begin + t.n; ++i) p[i] -= step * (m[i] / (std::sqrt(v[i]) + eps) + decay * p[i]);
  }
}

// The frozen ratio times lamb.py's factor, which also moves t.last_factor.
double OneBitLamb::frozen_ratio(Tensor& t, const float* p, const float* m, const float* v,
                                const float* v_fresh) const {
  const double eps = o_.base.eps, decay = t.decay ? o_.base.weight_decay : 0.0;
  double factor = 0.0, usq = 0.0, presq = 0.0;
  for (size_t i = t.begin; i < t.begin + t.n; ++i) {
    const double denom = std::sqrt(static_cast<double>(v[i])) + eps;
    const double pre = m[i] / denom, u = pre + decay * p[i];
    factor = std::max(factor, denom / (std::sqrt(static_cast<double>(v_fresh[i])) + eps));
    usq += u * u;
    presq += pre * pre;
  }
  if (decay > 0.0 && usq > 0.0) {
    const double ratio = std::min(1.0, std::sqrt(presq / usq));
    factor = factor * ratio + (1.0 - ratio);
  }
  factor = std::clamp(factor, o_.factor_min, o_.factor_max);
  factor = std::min(factor, t.last_factor * (1.0 + o_.factor_threshold));
  factor = std::max(factor, t.last_factor * (1.0 - o_.factor_threshold));
  t.last_factor = factor;
  return t.coeff_freeze * factor;
}

}  // namespace zt
