// Central-difference Hessian-vector products on a whole-model replica; see hessian_probe.h.
#include "engine/hessian_probe.h"

#include <algorithm>
#include <cmath>

#include "engine/trainer.h"

namespace zt {

HessianProbe::HessianProbe(const GptConfig& config, int max_batch, int max_seq, ProcessGroup* dp)
    : model_(GptModel::create(config, max_batch, max_seq)), dp_(dp), grads_(model_->param_table().numel()) {}

Status HessianProbe::global_gradient(const float* theta) {
  std::fill(grads_.begin(), grads_.end(), 0.0f);
  model_->bind(const_cast<float*>(theta), grads_.data());
  const float dloss = static_cast<float>(1.0 / static_cast<double>(global_count_));
  for (const MicroBatch& mb : micro_) {
    ZT_RETURN_IF_ERROR(model_->forward(mb.tokens, B_, T_));
    ZT_RETURN_IF_ERROR(model_->loss(mb.targets).status());
    ZT_RETURN_IF_ERROR(model_->backward(mb.tokens, mb.targets, dloss));
  }
  if (dp_ == nullptr || dp_->size() == 1) return Status::OK();
  return dp_->all_reduce(grads_.data(), grads_.size(), CommDType::kF32)->wait();
}

Status HessianProbe::gradient_difference(std::vector<float>* theta, int block, const std::vector<double>& v, double h,
                                         std::vector<double>* diff) {
  const ElementRange r = table().layer_range(block);
  const std::vector<float> saved(theta->begin() + static_cast<ptrdiff_t>(r.begin), theta->begin() + static_cast<ptrdiff_t>(r.end));
  for (size_t i = 0; i < r.size(); ++i) (*theta)[r.begin + i] = static_cast<float>(saved[i] + h * v[i]);
  ZT_RETURN_IF_ERROR(global_gradient(theta->data()));
  plus_.assign(grads_.begin() + static_cast<ptrdiff_t>(r.begin), grads_.begin() + static_cast<ptrdiff_t>(r.end));
  for (size_t i = 0; i < r.size(); ++i) (*theta)[r.begin + i] = static_cast<float>(saved[i] - h * v[i]);
  ZT_RETURN_IF_ERROR(global_gradient(theta->data()));
  std::copy(saved.begin(), saved.end(), theta->begin() + static_cast<ptrdiff_t>(r.begin));
  diff->resize(r.size());
  for (size_t i = 0; i < r.size(); ++i) (*diff)[i] = static_cast<double>(plus_[i]) - grads_[r.begin + i];
  return Status::OK();
}

// Each product: two second-order differences at steps h and 2h, combined to fourth order.
// Their disagreement |h2 - h1| / |h1| estimates 3x the second-order truncation; above
// 1e-2 the step is too large for this direction and shrinks by 4 (the block keeps the
// smaller step), at most 6 times per block: below that fp32 rounding, which grows as
// 1 / h, would dominate. The first step is cbrt(u) x max(1, ||theta_block||).
Status HessianProbe::hessian_vector(std::vector<float>* theta, int block, const std::vector<double>& v,
                                    std::vector<double>* hv) {
  const ElementRange r = table().layer_range(block);
  if (step_block_ != block) {
    double norm = 0.0;
    for (size_t i = r.begin; i < r.end; ++i) norm += static_cast<double>((*theta)[i]) * (*theta)[i];
    step_ = std::cbrt(std::ldexp(1.0, -24)) * std::max(1.0, std::sqrt(norm));
    step_block_ = block;
    shrinks_ = 0;
  }
  std::vector<double> d1, d2;
  for (;;) {
    ZT_RETURN_IF_ERROR(gradient_difference(theta, block, v, step_, &d1));
    ZT_RETURN_IF_ERROR(gradient_difference(theta, block, v, 2.0 * step_, &d2));
    double n1 = 0.0, ng = 0.0;
    for (size_t i = 0; i < r.size(); ++i) {
      const double g = d2[i] / 2.0 - d1[i];  // 2h (h2 - h1), with h1 = d1 / 2h and h2 = d2 / 4h
      ng += g * g;
      n1 += d1[i] * d1[i];
    }
    if (ng <= 1e-4 * n1 || shrinks_ == 6) break;
    step_ /= 4.0;
    ++shrinks_;
  }
  hv->resize(r.size());
  for (size_t i = 0; i < r.size(); ++i) (*hv)[i] = (8.0 * d1[i] - d2[i]) / (12.0 * step_);
  return Status::OK();
}

StatusOr<std::vector<BlockEigenvalue>> HessianProbe::block_eigenvalues(std::vector<float> theta,
                                                                       const std::vector<MicroBatch>& micro, int B, int T,
                                                                       const EigenvalueOptions& o, uint64_t seed,
                                                                       int64_t step) {
  micro_ = micro;
  B_ = B;
  T_ = T;
  int64_t count = 0;
  for (const MicroBatch& mb : micro) count += std::count_if(mb.targets, mb.targets + static_cast<ptrdiff_t>(B) * T, [](int32_t t) { return t >= 0; });
  if (dp_ != nullptr && dp_->size() > 1) ZT_RETURN_IF_ERROR(dp_->all_reduce(&count, 1, CommDType::kI64)->wait());
  if (count == 0) return Status::InvalidArgument("eigenvalue: the batch has no counted target token");
  global_count_ = count;
  step_block_ = -1;
  const int blocks = o.layer_num > 0 ? o.layer_num : model_->config().n_layer;
  std::vector<BlockEigenvalue> out;
  for (int b = 0; b < blocks; ++b) {
    const HessianVectorProduct hvp = [&](const std::vector<double>& v, std::vector<double>* hv) {
      return hessian_vector(&theta, b, v, hv);
    };
    ZT_ASSIGN_OR_RETURN(BlockEigenvalue e, power_iteration(hvp, eigenvalue_start_vector(table().layer_range(b).size(), seed, step, b), o));
    out.push_back(std::move(e));
  }
  return out;
}

StatusOr<std::vector<BlockEigenvalue>> trainer_block_eigenvalues(Trainer& trainer, HessianProbe* probe,
                                                                 const std::vector<MicroBatch>& micro,
                                                                 const EigenvalueOptions& o) {
  const TrainerOptions& to = trainer.options();
  if (trainer.pp_size() > 1 || trainer.param_table().tp_size() > 1 || trainer.param_table().ep_size() > 1) {
    return Status::FailedPrecondition("/eigenvalue: needs the whole model on every rank; pipeline, tensor and expert "
                                      "parallelism hold a part (use data parallelism and ZeRO)");
  }
  if (o.layer_num > to.model.n_layer) {
    return Status::InvalidArgument("/eigenvalue/layer_num: " + std::to_string(o.layer_num) + " exceeds the model's " +
                                   std::to_string(to.model.n_layer) + " blocks");
  }
  std::vector<float> theta(trainer.param_table().numel());
  ZT_RETURN_IF_ERROR(trainer.gather_params(theta.data()));
  return probe->block_eigenvalues(std::move(theta), micro, to.micro_batch, to.seq_len, o, to.seed, trainer.global_step());
}

std::vector<double> eigenvalues_per_parameter(const ParamTable& table, const std::vector<BlockEigenvalue>& blocks) {
  std::vector<double> values;
  for (const BlockEigenvalue& b : blocks) values.push_back(b.value);
  const std::vector<double> post = post_process_eigenvalues(values);
  std::vector<double> out;
  for (size_t b = 0; b < post.size(); ++b) {
    for (const TensorSpec& s : table.specs()) {
      if (s.layer == static_cast<int>(b)) out.push_back(post[b]);
    }
  }
  return out;
}

}  // namespace zt
