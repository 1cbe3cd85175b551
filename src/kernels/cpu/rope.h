// Rotary position embedding (RoPE) for q and k, HuggingFace's rotate-half layout
// (GPT-NeoX style, HF LlamaRotaryEmbedding + apply_rotary_pos_emb). Rows are (B, T, NH, HD);
// within each head, for i < HD/2 the pair (x[i], x[i + HD/2]) turns by
// angle(p, i) = p * theta^(-2i/HD) at position p = pos0 + t:
//   y[i]        = x[i] cos - x[i + HD/2] sin
//   y[i + HD/2] = x[i + HD/2] cos + x[i] sin
// The backward turns the gradient by -angle (a rotation's transpose is its inverse). The
// rotation is linear, so neither direction saves anything: out may alias inp, and the
// model applies it in place to q and k after their projections (v is not rotated).
//
// Meta's checkpoints (llama/model.py, llama2.c's model.py and run.c) pair (x[2i], x[2i+1])
// instead ("interleaved", GPT-J style). Attention only sees q.k, so permuting the output
// rows of W_q and W_k the same way within every head maps one layout onto the other; HF's
// convert_llama_weights_to_hf.py `permute` does it once at conversion:
//   HF row h*HD + j        = Meta row h*HD + 2j      (j < HD/2)
//   HF row h*HD + HD/2 + j = Meta row h*HD + 2j + 1
// i.e. w.view(n_heads, HD/2, 2, in).transpose(1, 2).reshape(n_heads*HD, in), with n_heads =
// num_attention_heads for W_q and num_key_value_heads for W_k; W_v, W_o and the MLP are not
// permuted. HF safetensors on the Hub are already permuted: import them as they are and
// permute only a Meta-layout source.
// Thread-safety: pure functions; each parallelises over rows with OpenMP.
#pragma once

#include <cstdint>

namespace zt {

// freqs (max_T, HD/2, 2) = [cos, sin] of angle(p, i) = p * inv_freq[i] for p < max_T, i < HD/2.
// inv_freq (HD/2 doubles) is theta^(-2i/HD), possibly rescaled (GptConfig::rope_inv_freq). The
// angle is computed in double, cos and sin rounded to fp32 once. REQUIRES: HD even.
void rope_table(float* freqs, int max_T, int HD, const double* inv_freq);

// out (B, T, NH, HD) = inp rotated by the angles of positions pos0 .. pos0 + T - 1, the same
// for every b. out may alias inp. REQUIRES: freqs from rope_table(HD) with max_T >= pos0 + T.
void rope_forward(float* out, const float* inp, const float* freqs, int B, int T, int NH, int HD, int pos0);

// dinp = dout rotated by the negated angles (assigned; dinp may alias dout).
void rope_backward(float* dinp, const float* dout, const float* freqs, int B, int T, int NH, int HD, int pos0);

}  // namespace zt
