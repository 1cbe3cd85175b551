// The Hessian-vector products behind the eigenvalue estimate (engine/eigenvalue.h), on a
// whole-model fp32 replica: DeepSpeed differentiates its gradient a second time
// (autograd with create_graph); zerotrain's kernels have no second derivative, so the
// product is a central difference of gradients of the same global batch, to fourth order:
//   D(h) = g(theta + h v) - g(theta - h v),  H v ~ (8 D(h) - D(2h)) / 12h,  v of unit norm on one block.
// Error: the two second-order quotients D(h)/2h and D(2h)/4h differ by 3x the former's
// h^2 truncation, so their disagreement is measured on every product; above 1e-2 of the
// product the step shrinks by 4 (from cbrt(u) x max(1, ||theta_block||), u = 2^-24, at most
// 6 times per block, below which fp32 rounding ~ u |g| / h would dominate). The accepted
// fourth-order product then carries ~(1e-2 / 3)^2 of truncation and the rounding term:
// ~1e-4 of |H v| on these models, far inside the power iteration's tol (1e-2 by default).
// The test (hessian_probe_test.cc) states the bound against PyTorch's dense Hessian. Each
// product costs four gradient passes over the batch (DeepSpeed's double backward, about two).
// The gradient is the mean over the global batch's counted tokens, summed over the
// data-parallel group: every rank gets the same product, so ranks iterate in step and any
// ZeRO stage gives the same estimate (the parameters come in whole: Trainer::gather_params).
// Pipeline and tensor parallelism are refused (each rank would need the whole model).
// Thread-safety: one thread; collective over dp.
#pragma once

#include <memory>
#include <vector>

#include "comm/process_group.h"
#include "engine/eigenvalue.h"
#include "nn/gpt_model.h"
#include "nn/gpt_training.h"

namespace zt {

class Trainer;

class HessianProbe {
 public:
  // max_batch x max_seq: the micro-batch shape; dp: null for one process.
  HessianProbe(const GptConfig& config, int max_batch, int max_seq, ProcessGroup* dp);

  // Each block's estimate (the first layer_num blocks, or all) on this rank's micro-batches
  // of B x T tokens at the whole parameters theta (table().numel() floats).
  StatusOr<std::vector<BlockEigenvalue>> block_eigenvalues(std::vector<float> theta, const std::vector<MicroBatch>& micro,
                                                           int B, int T, const EigenvalueOptions& options,
                                                           uint64_t seed, int64_t step);
  // One central-difference product on `block` (exposed for the tests).
  Status hessian_vector(std::vector<float>* theta, int block, const std::vector<double>& v, std::vector<double>* hv);
  const ParamTable& table() const { return model_->param_table(); }

 private:
  Status global_gradient(const float* theta);  // into grads_
  // g(theta + h v) - g(theta - h v) on `block`'s parameters.
  Status gradient_difference(std::vector<float>* theta, int block, const std::vector<double>& v, double h,
                             std::vector<double>* diff);
  std::unique_ptr<GptModel> model_;
  ProcessGroup* dp_;
  std::vector<float> grads_, plus_;
  std::vector<MicroBatch> micro_;
  double step_ = 0.0;    // the difference step of block step_block_ (chosen on its first product)
  int step_block_ = -1;
  int shrinks_ = 0;
  int B_ = 0, T_ = 0;
  int64_t global_count_ = 0;
};

// The Trainer's estimate on this step's micro-batches (before its update): gathers the
// parameters (collective under ZeRO-3) into the probe. Refuses pipeline and tensor
// parallelism and a layer_num beyond the model's depth.
StatusOr<std::vector<BlockEigenvalue>> trainer_block_eigenvalues(Trainer& trainer, HessianProbe* probe,
                                                                 const std::vector<MicroBatch>& micro,
                                                                 const EigenvalueOptions& options);

// DeepSpeed's per-parameter view of the estimate (engine._eigenvalue_summary_events): the
// post-processed value of each block repeated for each of its parameter tensors, blocks in
// order; event i is "Train/Eigenvalues/ModelBlockParam_<i>".
std::vector<double> eigenvalues_per_parameter(const ParamTable& table, const std::vector<BlockEigenvalue>& blocks);

}  // namespace zt
