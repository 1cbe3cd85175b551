// MoeOps: the data movement and expert MLPs of an MoE layer (issue 30), as one table of
// function pointers per device, in fp32, over backend memory: dispatch of each token's
// row to its experts' buffers, the E expert MLPs on the rows they received, and the
// weighted combine, forward and backward. Routing itself (kernels/moe_gate.h) is host code
// for every device; its choices reach these kernels as MoeSlots in backend memory.
// Backend::moe_ops() gives the table, or null where a backend has none (the model then
// refuses MoE blocks, naming the backend). Contracts: kernels/cpu/moe_dispatch.h and
// kernels/cpu/moe_experts.h. Per-expert arguments (weights, fill counts) are host arrays
// of backend pointers and counts.
// Thread-safety: tables are immutable; kernels parallelise inside.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace zt {

// A layer's routing as the kernels read it: (N, k) experts and buffer locations, -1 where dropped.
struct MoeSlots {
  const int32_t* expert;    // (N, k), -1 = dropped
  const int32_t* location;  // (N, k)
  int64_t N;
  int k;
  int E;
  int64_t capacity;
};

// Rows of each expert's buffer a token landed in (the expert computes on these only), from
// host copies of the choices.
std::vector<int64_t> moe_fill(const MoeSlots& s);

// The compact layout of the expert buffers: expert e's rows are [offset[e], offset[e] +
// fill[e]) of one buffer of rows() rows, experts in order, so a run of experts is one
// contiguous block (expert parallelism sends each peer one segment) and nothing is padded to
// the capacity. For dispatch and combine it is the layout of one expert whose capacity is
// rows(): slot_expert is 0 where a slot was kept and -1 where dropped, slot_row its row.
struct MoeCompact {
  std::vector<int64_t> fill;         // E
  std::vector<int64_t> offset;       // E + 1
  std::vector<int32_t> slot_expert;  // (N, k)
  std::vector<int32_t> slot_row;     // (N, k)
  int64_t rows() const { return offset.back(); }
};
// From host copies of the choices (locations count an expert's kept tokens in token order).
MoeCompact moe_compact(const MoeSlots& s);

struct MoeExpertWeights {
  const float* in_w;   // (I, C): GELU's c_fc, SwiGLU's gate (w1)
  const float* in_b;   // (I) or null
  const float* up_w;   // (I, C) SwiGLU's up (w3), else null
  const float* out_w;  // (C, I): c_proj, down (w2)
  const float* out_b;  // (C) or null
};

struct MoeExpertGrads {
  float* in_w;
  float* in_b;  // null where the weights have no bias
  float* up_w;
  float* out_w;
  float* out_b;
};

// What the forward keeps for the backward, (E, cap, I) each; h_up only for SwiGLU.
struct MoeExpertActs {
  float* h_in;
  float* h_up;
  float* act;
};

struct MoeExpertShape {
  int E;
  int64_t capacity;
  int C;
  int I;
  bool swiglu;
};

// How a dense MLP beside the experts meets their output (kernels/cpu/moe_mix.h):
// DeepSpeed's PR-MoE residual (softmax over two coefficients), Qwen2-MoE's gated shared
// expert (sigmoid of one logit), DeepSeek-MoE's shared experts (a plain sum).
enum class MoeMix { kResidual, kGatedShared, kShared };
// Logits per token: 2, 1 or 0.
inline int moe_mix_logits(MoeMix kind) { return kind == MoeMix::kResidual ? 2 : kind == MoeMix::kGatedShared ? 1 : 0; }

struct MoeOps {
  void (*dispatch)(float* buf, const float* x, const MoeSlots& s, int C);
  void (*dispatch_backward)(float* dx, const float* dbuf, const MoeSlots& s, int C);
  void (*combine)(float* y, const float* out, const float* weight, const MoeSlots& s, int C);
  void (*combine_backward)(float* dout, float* dweight, const float* dy, const float* out, const float* weight,
                           const MoeSlots& s, int C);
  void (*experts_forward)(float* out, const MoeExpertActs& acts, const float* buf, const std::vector<MoeExpertWeights>& w,
                          const std::vector<int64_t>& fill, const MoeExpertShape& s);
  void (*experts_backward)(float* dbuf, const std::vector<MoeExpertGrads>& g, const float* dout,
                           const MoeExpertActs& acts, const float* buf, const std::vector<MoeExpertWeights>& w,
                           const std::vector<int64_t>& fill, const MoeExpertShape& s, float* scratch);
  size_t (*experts_scratch_floats)(const MoeExpertShape& s);
  void (*mix_forward)(float* y, const float* moe, const float* dense, const float* logits, int64_t N, int C, MoeMix kind);
  void (*mix_backward)(float* dmoe, float* ddense, float* dlogits, const float* dy, const float* moe, const float* dense,
                       const float* logits, int64_t N, int C, MoeMix kind);
};

}  // namespace zt
