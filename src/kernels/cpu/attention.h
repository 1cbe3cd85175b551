// Causal multi-head self-attention over a fused QKV activation.
//
// qkv: (B, T, 3C) with Q, K, V side by side, head h at columns [h*hs, (h+1)*hs) of each.
// The forward saves P = softmax(Q K^T / sqrt(hs)) with the causal mask, (B, NH, T, T),
// because the backward needs exactly P: dV = P^T dO, dS = P o (dP - rowsum(dP o P)).
// Saving P (not the pre-softmax scores) costs B*NH*T^2 floats per layer and saves
// recomputing Q K^T and T^2 exponentials per head in the backward; see
// docs/design/attention.md for the trade-off against a flash-style recompute.
#pragma once

namespace zt {

// atty: (B, T, C) attention output before the projection; att: (B, NH, T, T) saved P.
void attention_forward(float* atty, float* att, const float* qkv, int B, int T, int C, int NH);

// dqkv: (B, T, 3C), assigned; datty: (B, T, C); qkv and att as saved by the forward.
void attention_backward(float* dqkv, const float* datty, const float* qkv, const float* att, int B, int T, int C,
                        int NH);

}  // namespace zt
