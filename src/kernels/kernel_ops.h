// KernelOps: every computation the model and the optimizer ask of a device, as one table
// of function pointers per (device, compute dtype). nn/ and optim/ call the table their
// Backend gives them and never a kernel by path; a device backend (CUDA, ...) fills the
// same table with its own kernels and streams.
//
// Conventions (llm.c's): outputs first, then inputs, then sizes. Parameter gradients
// accumulate (+=) so gradient accumulation is free; activation gradients are assigned,
// except on the residual stream (layernorm's dinp accumulates). Shapes in comments use
// N rows, C channels, OC output channels, V real classes, Vp padded classes.
// The mixed-precision tables are ActivationOps<half_t> (kernels/activation_ops.h), which
// a bf16/f16 Backend returns from half_ops() next to this f32 table.
// Thread-safety: tables are immutable; each kernel parallelises internally.
#pragma once

#include <cstdint>

#include "kernels/activation_ops.h"
#include "tensor/dtype.h"
#include "kernels/kernel_args.h"

namespace zt {

// The f32 table: the model's activation kernels (ActivationOps<float>, whose `compute` is
// kF32) plus the GEMM, the tensor-parallel halves, elementwise helpers and the optimizer
// kernels, which every backend runs in fp32 (master weights and moments are fp32).
struct KernelOps : ActivationOps<float> {
  const char* kernel_isa = "";  // the vector ISA the elementwise kernels were built for

  // C (M, N) = alpha * op(A) op(B) + beta * C, row-major, strides in elements.
  void (*gemm)(Trans ta, Trans tb, int M, int N, int K, float alpha, const float* A, int lda, const float* B, int ldb,
               float beta, float* C, int ldc);

  // The cross-entropy's last vocabulary-parallel step (fp32 only, every precision):
  // stats[2i+1] = log(row_sums[2i]); losses = (max - target logit) + log-sum (0 for ignored rows).
  void (*vocab_xent_finish)(float* losses, float* stats, const float* row_sums, const int32_t* targets, int64_t N);
  // RoPE's table for every precision: freqs (max_T, HD/2, 2) = [cos, sin] of p * theta^(-2i/HD)
  // for positions p < max_T, i < HD/2; the angle in double, each entry rounded to fp32 once.
  void (*rope_table)(float* freqs, int max_T, int HD, const double* inv_freq);

  // Elementwise.
  void (*accumulate)(float* dst, const float* src, int64_t n);  // dst += src
  void (*scale)(float* x, float c, int64_t n);                   // x *= c, rounded once
  // Round to nearest even; NaN stays NaN.
  void (*cast_f32_to_bf16)(bf16_t* dst, const float* src, int64_t n);
  void (*cast_bf16_to_f32)(float* dst, const bf16_t* src, int64_t n);
  void (*cast_f32_to_f16)(f16_t* dst, const float* src, int64_t n);  // f16 overflows to +-inf
  void (*cast_f16_to_f32)(float* dst, const f16_t* src, int64_t n);

  // The loss of one micro-batch, into two doubles of backend memory: out[0] = the sum of
  // losses[i] over i < n whose target is not kIgnoreIndex (in double, i in order), out[1]
  // = how many there are. The engine reads a step's sums in one copy.
  void (*loss_sum)(double* out, const float* losses, const int32_t* targets, int64_t n);

  // Optimizer.
  // *acc += sum x^2: acc is one double of the backend's memory, so a step's norm is summed
  // where the gradients live and read once (the sum itself in double, fixed order, then
  // one double addition into *acc).
  void (*sum_squares)(double* acc, const float* x, int64_t n);
  void (*adamw_step)(float* p, const float* g, float* m, float* v, int64_t n, const AdamWArgs& args);
  // LAMB over one whole tensor (kernel_args.h's LambArgs): lamb_moments updates m and v and
  // adds sum p^2 and sum u^2 into *sums (backend memory); lamb_apply then does
  // p += lamb_neg_step(*sums, args) * u, reading the sums where they are.
  void (*lamb_moments)(const float* p, const float* g, float* m, float* v, int64_t n, const LambArgs& args,
                       LambSums* sums);
  void (*lamb_apply)(float* p, const float* m, const float* v, int64_t n, const LambArgs& args, const LambSums* sums);
  void (*sgd_step)(float* p, const float* g, float* buf, int64_t n, const SgdArgs& args);
};

}  // namespace zt
