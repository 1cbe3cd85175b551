// KernelTable: the ISA-dispatched CPU kernels. Each ISA's translation unit
// (kernels_scalar.cc, kernels_avx2.cc, kernels_avx512.cc) instantiates the templates in
// impl/ for its ISA struct and fills one table; cpu_kernels() returns the table for
// active_isa(). The CPU backend (backend/cpu/cpu_backend.cc) puts these pointers into
// its KernelOps table, which is what the model and the optimizers call.
// Thread-safety: tables are immutable after static initialisation.
#pragma once

#include <cstdint>

#include "core/cpu_features.h"
#include "kernels/kernel_args.h"

namespace zt {

// One thread's cast of n floats into 16-bit patterns (a compute format's from_f32), and back.
using NarrowFn = void (*)(uint16_t* dst, const float* src, int64_t n);
using WidenFn = void (*)(float* dst, const uint16_t* src, int64_t n);

struct KernelTable {
  Isa isa;
  void (*layernorm_forward)(float* out, float* mean, float* rstd, const float* inp, const float* weight,
                            const float* bias, int64_t N, int C);
  void (*layernorm_backward)(float* dinp, float* dweight, float* dbias, const float* dout, const float* inp,
                             const float* weight, const float* mean, const float* rstd, int64_t N, int C);
  void (*gelu_forward)(float* out, const float* inp, int64_t n);
  void (*gelu_backward)(float* dinp, const float* inp, const float* dout, int64_t n);
  void (*attention_softmax_forward)(float* P, int T);
  void (*attention_softmax_backward)(float* dP, const float* P, int T, float scale);
  void (*crossentropy_forward)(float* losses, float* stats, const float* logits, const int32_t* targets,
                               int64_t N, int V, int Vp);
  void (*crossentropy_backward)(float* dlogits, const float* logits, const float* stats,
                                const int32_t* targets, float dloss, int64_t N, int V, int Vp);
  float (*row_max)(const float* x, int n);
  float (*row_sum_exp)(const float* x, int n, float m);
  void (*row_softmax_scaled)(float* d, const float* x, int n, float m, float logsum, float scale);
  double (*sum_squares)(const float* x, int64_t n);
  void (*adamw_step)(float* p, const float* g, float* m, float* v, int64_t n, const AdamWArgs& args);
  // adamw_step, and out = narrow(p) chunk by chunk while each chunk is in cache (narrow
  // runs on the chunk's thread): the mixed-precision step's compute copy in the same pass.
  void (*adamw_step_narrow)(float* p, const float* g, float* m, float* v, int64_t n, const AdamWArgs& args,
                            uint16_t* out, NarrowFn narrow);
  void (*lamb_moments)(const float* p, const float* g, float* m, float* v, int64_t n, const LambArgs& args,
                       LambSums* sums);
  void (*lamb_apply)(float* p, const float* m, const float* v, int64_t n, const LambArgs& args, const LambSums* sums);
  // The Llama layers (impl/rmsnorm_impl.h, impl/swiglu_impl.h); contracts in kernels/activation_ops.h.
  void (*rmsnorm_forward)(float* out, float* rstd, const float* inp, const float* weight, int64_t N, int C,
                          float eps);
  void (*rmsnorm_backward)(float* dinp, float* dweight, const float* dout, const float* inp, const float* weight,
                           const float* rstd, int64_t N, int C);
  void (*swiglu_forward)(float* out, const float* gate, const float* up, int64_t n);
  void (*swiglu_backward)(float* dgate, float* dup, const float* dout, const float* gate, const float* up, int64_t n);
  // The bf16 table's GELU, LayerNorm, AdamW copy, cross-entropy and RMSNorm, over bf16 bit
  // patterns: the fp32 kernels' bits on the widened inputs, each output rounded once
  // (impl/gelu_impl.h, impl/layernorm_impl.h, impl/adamw_impl.h, impl/crossentropy_impl.h,
  // impl/rmsnorm_impl.h). Statistics, losses
  // and parameter gradients stay fp32.
  void (*gelu_forward_bf16)(uint16_t* out, const uint16_t* inp, int64_t n);
  void (*gelu_backward_bf16)(uint16_t* dinp, const uint16_t* inp, const uint16_t* dout, int64_t n);
  void (*layernorm_forward_bf16)(uint16_t* out, float* mean, float* rstd, const uint16_t* inp, const uint16_t* weight,
                                 const uint16_t* bias, int64_t N, int C);
  void (*layernorm_backward_bf16)(uint16_t* dinp, float* dweight, float* dbias, const uint16_t* dout,
                                  const uint16_t* inp, const uint16_t* weight, const float* mean, const float* rstd,
                                  int64_t N, int C);
  // adamw_step, and out = the bf16 copy of p, narrowed from the registers.
  void (*adamw_step_bf16)(float* p, const float* g, float* m, float* v, int64_t n, const AdamWArgs& args,
                          uint16_t* out);
  void (*crossentropy_forward_bf16)(float* losses, float* stats, const uint16_t* logits, const int32_t* targets,
                                    int64_t N, int V, int Vp);
  void (*crossentropy_backward_bf16)(uint16_t* dlogits, const uint16_t* logits, const float* stats,
                                     const int32_t* targets, float dloss, int64_t N, int V, int Vp);
  void (*rmsnorm_forward_bf16)(uint16_t* out, float* rstd, const uint16_t* inp, const uint16_t* weight, int64_t N,
                               int C, float eps);
  void (*rmsnorm_backward_bf16)(uint16_t* dinp, float* dweight, const uint16_t* dout, const uint16_t* inp,
                                const uint16_t* weight, const float* rstd, int64_t N, int C);
  // One thread's bf16 casts (bf16_convert.h splits the bulk casts over the threads), and the
  // same over `rows` rows of `cols` values, ldd and lds apart in dst and src.
  WidenFn widen_bf16;
  NarrowFn narrow_bf16;
  void (*widen_bf16_rows)(float* dst, int64_t ldd, const uint16_t* src, int64_t lds, int rows, int cols);
  void (*narrow_bf16_rows)(uint16_t* dst, int64_t ldd, const float* src, int64_t lds, int rows, int cols);
};

// The table for active_isa().
const KernelTable& cpu_kernels();
// The table for one ISA (tests compare ISAs); aborts if the CPU lacks it.
const KernelTable& cpu_kernels_for(Isa isa);

namespace kernels_scalar { extern const KernelTable kTable; }
namespace kernels_avx2 { extern const KernelTable kTable; }
namespace kernels_avx512 { extern const KernelTable kTable; }

}  // namespace zt
