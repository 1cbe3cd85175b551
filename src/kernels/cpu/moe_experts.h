// The experts of an MoE layer (issue 30), forward and backward, in fp32 on the host: E
// expert MLPs of the model's kind (GPT-2's GELU MLP with biases, or a SwiGLU MLP as
// Mixtral's w1/w3/w2, biases optional), each on the first fill[e] rows of its (cap, C)
// buffer from moe_dispatch.h. Rows past fill[e] are neither read nor written: the gate
// gives them weight 0, so DeepSpeed's experts, which compute on the whole buffer, give the
// same result.
//   forward:  h_in = buf W_in^T + b_in; SwiGLU: h_up = buf W_up^T, act = silu(h_in) h_up;
//             GELU: act = gelu(h_in); out = act W_out^T + b_out
//   backward: dbuf's filled rows (assigned; the rest are not written, and dispatch's
//             backward never reads them) and the weights' gradients (+=) from dout.
// The activation and GEMM kernels are the dense MLP's (linear.h, the KernelTable's GELU
// and SwiGLU), so an expert computes what a dense MLP of its width computes on its rows.
// Thread-safety: pure functions over the caller's buffers; kernels parallelise inside.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels/moe_ops.h"

namespace zt {

// Floats of scratch the backward needs: (cap, I) for SwiGLU's two gates and the activation
// gradient, and (cap, C) for the up projection's input gradient.
size_t moe_experts_scratch_floats(const MoeExpertShape& s);

void moe_experts_forward(float* out, const MoeExpertActs& acts, const float* buf, const std::vector<MoeExpertWeights>& w,
                         const std::vector<int64_t>& fill, const MoeExpertShape& s);
void moe_experts_backward(float* dbuf, const std::vector<MoeExpertGrads>& g, const float* dout, const MoeExpertActs& acts,
                          const float* buf, const std::vector<MoeExpertWeights>& w, const std::vector<int64_t>& fill,
                          const MoeExpertShape& s, float* scratch);

}  // namespace zt
