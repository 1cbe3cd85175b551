// Causal multi-head self-attention without the T x T probabilities (FlashAttention-2's
// algorithm on the CPU): the same layout as attention.h, qkv (B, T, 3C) and out (B, T, C),
// but the forward saves only each row's log-sum-exp, and the backward recomputes the
// probabilities tile by tile from it. Memory per (b, head) is O(T), not O(T^2).
//
// Forward, per (b, head), query tiles of kTile rows against key tiles up to the diagonal:
//   S = (Q_i K_j^T) / sqrt(hs); the running max m, sum l and accumulator O are rescaled by
//   exp(m_old - m_new); out = O / l; lse = m + log l.
// Backward, per (b, head): D = rowsum(dO o O); for each key tile j, for each query tile
// i >= j: P = exp(S - lse), dV_j += P^T dO_i, dP = dO_i V_j^T, dS = P o (dP - D) / sqrt(hs),
// dQ_i += dS K_j, dK_j += dS^T Q_i.
// Determinism: each (b, head) is one thread's, in a fixed tile order, so the bits depend on
// neither the thread count nor the schedule. The sums over keys run tile by tile with
// rescaling, not in the materialized kernel's order: the two differ by rounding (bounded in
// flash_attention_test.cc against a double reference).
// Thread-safety: parallel over (b, head) inside; the per-tile GEMMs run on the calling
// thread (gemm.h).
#pragma once

namespace zt {

// out (B, T, C) assigned; lse (B, NH, T) saved for the backward.
void flash_attention_forward(float* out, float* lse, const float* qkv, int B, int T, int C, int NH);

// dqkv (B, T, 3C) assigned, from dout (B, T, C) and the forward's qkv, out and lse.
void flash_attention_backward(float* dqkv, const float* dout, const float* qkv, const float* out, const float* lse,
                              int B, int T, int C, int NH);

}  // namespace zt
