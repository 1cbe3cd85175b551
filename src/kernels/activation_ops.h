// ActivationOps<A>: the part of a kernel table whose activations are stored as A: float
// for fp32 compute, half_t (16-bit storage) for bf16 and fp16 compute. The model
// (nn/gpt_model) is written once against this table and instantiated per storage type.
//
// Storage of the mixed-precision tables (issue 13, DeepSpeed's bf16/fp16 semantics):
// - activations, activation gradients and the compute copy of the parameters are A;
// - parameter gradients accumulate (+=) into fp32;
// - LayerNorm and RMSNorm statistics, RoPE's cos/sin table, per-token losses and the
//   cross-entropy's (max, log-sum-exp) are fp32; every reduction (GEMM sums, LayerNorm moments, softmax, cross-entropy)
//   accumulates in fp32 and each A output is rounded once (round to nearest even).
// Conventions as KernelOps (kernels/kernel_ops.h): outputs first, then inputs, then sizes.
// Thread-safety: tables are immutable; each kernel parallelises internally.
#pragma once

#include <cstdint>

#include "tensor/dtype.h"
#include "kernels/kernel_args.h"

namespace zt {

template <typename A>
struct ActivationOps {
  DType compute = DType::kF32;  // what A holds: kF32 for float, kBF16 or kF16 for half_t

  // out (N, OC) = residual (may be null) + bias (may be null) + inp (N, C) @ weight (OC, C)^T.
  void (*linear_forward)(A* out, const A* inp, const A* weight, const A* bias, const A* residual, int64_t N, int C,
                         int OC);
  // dinp (N, C) = dout @ weight (skipped when null); dweight += dout^T @ inp; dbias += column sums.
  void (*linear_backward)(A* dinp, float* dweight, float* dbias, const A* dout, const A* inp, const A* weight,
                          int64_t N, int C, int OC);
  // Causal self-attention over fused qkv (B, T, 3C): atty (B, T, C), att (B, NH, T, T) saved P.
  void (*attention_forward)(A* atty, A* att, const A* qkv, int B, int T, int C, int NH);
  void (*attention_backward)(A* dqkv, const A* datty, const A* qkv, const A* att, int B, int T, int C, int NH);
  // Flash attention (kernels/cpu/flash_attention.h): atty (B, T, C) and lse (B, NH, T) fp32,
  // no T x T; the backward reads the forward's atty. Null where the backend has none.
  void (*flash_attention_forward)(A* atty, float* lse, const A* qkv, int B, int T, int C, int NH);
  void (*flash_attention_backward)(A* dqkv, const A* datty, const A* qkv, const A* atty, const float* lse, int B,
                                   int T, int C, int NH);
  // out (B, T, C) = wte[tokens] + wpe[t]; backward scatters into dwte, dwpe (+=). wpe and
  // dwpe may be null (no position table: Llama), here and in the vocab-parallel pair below.
  void (*encoder_forward)(A* out, const int32_t* tokens, const A* wte, const A* wpe, int B, int T, int C);
  void (*encoder_backward)(float* dwte, float* dwpe, const A* dout, const int32_t* tokens, int B, int T, int C);
  void (*layernorm_forward)(A* out, float* mean, float* rstd, const A* inp, const A* weight, const A* bias, int64_t N,
                            int C);
  // dinp += (the residual stream's gradient accumulates); dweight, dbias +=.
  void (*layernorm_backward)(A* dinp, float* dweight, float* dbias, const A* dout, const A* inp, const A* weight,
                             const float* mean, const float* rstd, int64_t N, int C);
  void (*gelu_forward)(A* out, const A* inp, int64_t n);
  void (*gelu_backward)(A* dinp, const A* inp, const A* dout, int64_t n);  // dinp may alias dout
  // Llama layers (kernels/cpu/impl/rmsnorm_impl.h, rope.h, impl/swiglu_impl.h; docs/design/llama-layers.md).
  // RMSNorm (HF LlamaRMSNorm): out (N, C) = inp * rstd * weight, rstd (N) = 1 / sqrt(mean(inp^2) + eps)
  // in fp32, saved for the backward. No bias.
  void (*rmsnorm_forward)(A* out, float* rstd, const A* inp, const A* weight, int64_t N, int C, float eps);
  // dinp += (the residual stream's gradient accumulates); dweight +=.
  void (*rmsnorm_backward)(A* dinp, float* dweight, const A* dout, const A* inp, const A* weight, const float* rstd,
                           int64_t N, int C);
  // Rotary position embedding, HF rotate-half layout, on rows (B, T, NH, HD): the pair
  // (x[i], x[i + HD/2]) of every head turns by the angle of position pos0 + t, frequency i,
  // read from freqs (KernelOps::rope_table, fp32 for every A). out may alias inp.
  // REQUIRES: HD even; freqs built for HD with max_T >= pos0 + T.
  void (*rope_forward)(A* out, const A* inp, const float* freqs, int B, int T, int NH, int HD, int pos0);
  // dinp = the inverse rotation of dout (assigned; dinp may alias dout).
  void (*rope_backward)(A* dinp, const A* dout, const float* freqs, int B, int T, int NH, int HD, int pos0);
  // SwiGLU: out (n) = silu(gate) * up, silu(a) = a sigmoid(a). Nothing is saved beyond gate and up.
  void (*swiglu_forward)(A* out, const A* gate, const A* up, int64_t n);
  // dgate, dup (n) assigned; each may alias dout, gate or up element for element, not each other.
  void (*swiglu_backward)(A* dgate, A* dup, const A* dout, const A* gate, const A* up, int64_t n);
  // Grouped-query heads (kernels/cpu/gqa.h): qkv (BT, 3 NH HD) = [q | k, v with each of the
  // NKV kv heads repeated NH / NKV times]; the backward copies dq and sums each kv head's
  // repeated gradients into dk, dv (BT, NKV HD) in fp32, in copy order, rounded once.
  void (*gqa_pack)(A* qkv, const A* q, const A* k, const A* v, int64_t BT, int NH, int NKV, int HD);
  void (*gqa_unpack)(A* dq, A* dk, A* dv, const A* dqkv, int64_t BT, int NH, int NKV, int HD);
  // losses (N), stats (N, 2) = [max, log-sum-exp]; targets -1 are ignored.
  void (*crossentropy_forward)(float* losses, float* stats, const A* logits, const int32_t* targets, int64_t N, int V,
                               int Vp);
  // dlogits may alias logits (the model overwrites logits in place).
  void (*crossentropy_backward)(A* dlogits, const A* logits, const float* stats, const int32_t* targets, float dloss,
                                int64_t N, int V, int Vp);
  // Tensor parallelism (Megatron's vocabulary-parallel embedding and cross-entropy,
  // row-parallel layers): the local halves around the collectives nn/tp/ issues. What is
  // summed across ranks is fp32. Shapes: rows = B T, C channels, Vl the slice's classes.
  // partial (rows, C) = wte_l[token - v.start] for tokens in the slice, else 0.
  void (*vocab_embedding_rows)(float* partial, const int32_t* tokens, const A* wte_l, int64_t rows, int C,
                               const VocabSlice& v);
  // out (rows, C) = summed (the all-reduced partial) + wpe[row % T], rounded once.
  void (*embedding_finish)(A* out, const float* summed, const A* wpe, int64_t rows, int T, int C);
  void (*vocab_embedding_backward)(float* dwte_l, float* dwpe, const A* dout, const int32_t* tokens, int B, int T,
                                   int C, const VocabSlice& v);
  // row_max (N) of the slice's real classes.
  void (*vocab_xent_row_max)(float* row_max, const A* logits_l, int64_t N, const VocabSlice& v);
  // stats[2i] = max over the P gathered row maxima (P, N); row_sums (N, 2) = [sum exp(x - max), target logit or 0].
  void (*vocab_xent_partials)(float* stats, float* row_sums, const float* row_max_all, int P, const A* logits_l,
                              const int32_t* targets, int64_t N, const VocabSlice& v);
  // dlogits_l may alias logits_l.
  void (*vocab_xent_backward)(A* dlogits_l, const A* logits_l, const float* stats, const int32_t* targets,
                              float dloss, int64_t N, const VocabSlice& v);
  // partial (N, OC) = inp (N, C) @ weight (OC, C)^T in fp32: a row-parallel layer's local product.
  void (*linear_partial)(float* partial, const A* inp, const A* weight, int64_t N, int C, int OC);
  // linear_backward with an fp32 input gradient (assigned): a column-parallel layer's
  // partial dinp, summed over tp ranks in fp32 before it is rounded once.
  void (*linear_backward_partial)(float* dinp, float* dweight, float* dbias, const A* dout, const A* inp,
                                  const A* weight, int64_t N, int C, int OC);
  // out (N, C) = (residual + partial) + bias, per row, rounded once (a row-parallel layer's
  // epilogue); bias may be null.
  void (*bias_residual)(A* out, const A* residual, const float* partial, const A* bias, int64_t N, int C);

  // dst (n floats) = src widened, exactly (sampling reads logits, tests read activations).
  void (*to_f32)(float* dst, const A* src, int64_t n);
  // dst = src rounded to A (nearest even; NaN stays NaN; f16 overflows to inf): the compute
  // copy of the parameters cast from the fp32 master after each step.
  void (*from_f32)(A* dst, const float* src, int64_t n);
  // The mixed-precision optimizer step with its compute copy (DeepSpeed's CPU Adam
  // update-and-copy): KernelOps::adamw_step on p, g, m, v, and dst = the updated p rounded
  // as from_f32 rounds it. The CPU writes dst chunk by chunk while p is in cache, instead
  // of a second pass over the parameters. dst may equal p (fp32: nothing to copy).
  void (*adamw_step_copy)(A* dst, float* p, const float* g, float* m, float* v, int64_t n, const AdamWArgs& args);

  // Compression's quantize-dequantize of an activation in place: x (n values) in `groups`
  // equal groups, DeepSpeed's arithmetic in fp32 (kernels/cpu/fake_quant.h), rounded to A
  // once. Host-memory backends only (compression refuses the others); null elsewhere.
  void (*fake_quant)(A* x, int64_t n, int64_t groups, int bits, bool symmetric);
};

}  // namespace zt
