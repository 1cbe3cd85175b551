// The kernel calls of one training micro-batch on one rank, as the planner's unit of
// compute: each OpCall names a backend kernel (kernels/activation_ops.h, kernels/kernel_ops.h) and
// the shape it is called with, so a measured time per (kernel, shape) (calibration.h)
// prices the whole pass. The lists mirror nn/gpt_block.cc, nn/gpt_layers.cc and
// nn/gpt_model.cc call for call for the GEMMs, attention, norms and activations; the
// tensor-parallel variants (linear_partial, linear_backward_partial, the vocabulary-
// parallel embedding and cross-entropy) are priced as the plain kernel of the same shape,
// and small epilogues (bias_residual, casts, the GQA repacking) are left out.
// Invariant: the GEMM flops of forward_ops() equal 2 x the weights' multiply-adds per
// token x tokens (op_list_test.cc).
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "nn/gpt_config.h"
#include "nn/gpt_layout.h"

namespace zt {

enum class OpKind {
  kLinearForward,      // (N, C, OC)
  kLinearBackward,     // (N, C, OC)
  kAttentionForward,   // (B, T, C, NH): the rank's heads
  kAttentionBackward,  // (B, T, C, NH)
  kLayerNormForward,   // (N, C)
  kLayerNormBackward,  // (N, C)
  kRmsNormForward,     // (N, C)
  kRmsNormBackward,    // (N, C)
  kGeluForward,        // (n)
  kGeluBackward,       // (n)
  kSwigluForward,      // (n)
  kSwigluBackward,     // (n)
  kRopeForward,        // (B, T, NH, HD)
  kRopeBackward,       // (B, T, NH, HD)
  kEncoderForward,     // (B, T, C)
  kEncoderBackward,    // (B, T, C)
  kXentForward,        // (N, Vp): the rank's padded classes
  kXentBackward,       // (N, Vp)
  kAdamW,              // (n): one optimizer update of n elements
};
constexpr int kNumOpKinds = 19;

const char* op_kind_name(OpKind k);  // "linear_forward", ...
bool parse_op_kind(const std::string& name, OpKind* out);

struct OpCall {
  OpKind kind = OpKind::kLinearForward;
  int64_t dims[4] = {0, 0, 0, 0};
  // "linear_forward 512 768 2304": the calibration table's key.
  std::string key() const;
  // The size by which calls of one kind are compared when a shape was not measured:
  // flops for GEMMs and attention, elements touched otherwise.
  double work() const;
  bool is_gemm() const { return kind == OpKind::kLinearForward || kind == OpKind::kLinearBackward; }
};

// Parses OpCall::key(); false on anything else.
bool parse_op_key(const std::string& key, OpCall* out);

// One micro-batch of B sequences of T tokens on the rank holding `layout`'s part of the
// model. Backward includes the recomputed forward of every checkpointed block
// (checkpoint indexed by global block; empty: none).
std::vector<OpCall> forward_ops(const GptConfig& c, const GptLayout& layout, int B, int T);
std::vector<OpCall> backward_ops(const GptConfig& c, const GptLayout& layout, int B, int T,
                                 const std::vector<bool>& checkpoint);

// Every distinct call of a whole model's micro-batch (every block checkpointed, so the
// recompute is included) for each micro-batch size and tensor-parallel degree that the
// model admits: what `zerotrain calibrate --config` measures.
std::vector<OpCall> calibration_calls(const GptConfig& c, int T, const std::vector<int>& micro_batches,
                                      const std::vector<int>& tp_degrees);

// The sum of OpCall::work() over the GEMMs of `ops`.
double gemm_flops(const std::vector<OpCall>& ops);

}  // namespace zt
