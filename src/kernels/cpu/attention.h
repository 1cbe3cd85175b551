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

// One (batch, head) of the forward: P (T x T) = causal softmax(Q K^T / sqrt(hs)) and
// out = P V, with the rows of q, k and v ld floats apart and out's ldo apart. The
// whole-batch kernels below and the 16-bit ones (which widen each head's slices into
// scratch, half_ops_sequence.cc) both run it, so both give the same bits.
void attention_head_forward(float* out, int ldo, float* P, const float* q, const float* k, const float* v, int ld,
                            int T, int hs);

// The gradients one head's backward writes (assigned), rows ld floats apart.
struct AttentionHeadGrads {
  float* dq;
  float* dk;
  float* dv;
  int ld;
};

// One (batch, head) of the backward; dP is T x T scratch.
void attention_head_backward(const AttentionHeadGrads& g, float* dP, const float* dout, int ldo, const float* q,
                             const float* k, const float* v, int ld, const float* P, int T, int hs);

// atty: (B, T, C) attention output before the projection; att: (B, NH, T, T) saved P.
void attention_forward(float* atty, float* att, const float* qkv, int B, int T, int C, int NH);

// dqkv: (B, T, 3C), assigned; datty: (B, T, C); qkv and att as saved by the forward.
void attention_backward(float* dqkv, const float* datty, const float* qkv, const float* att, int B, int T, int C,
                        int NH);

}  // namespace zt
