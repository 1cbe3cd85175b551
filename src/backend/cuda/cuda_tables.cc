// make_cuda_f32_ops / make_cuda_half_ops (cuda_tables.h): one template per entry over the
// storage dtype D; A is float for kF32 and half_t otherwise.
#include "backend/cuda/cuda_tables.h"

#include <cmath>
#include <initializer_list>
#include <utility>
#include <vector>

#include "backend/cuda/attention_env.h"
#include "backend/cuda/cuda_context.h"
#include "core/check.h"
#include "kernels/cpu/rope.h"
#include "kernels/cuda/activation.h"
#include "kernels/cuda/attention.h"
#include "kernels/cuda/flash_attention.h"
#include "kernels/cuda/bias_grad.h"
#include "kernels/cuda/crossentropy.h"
#include "kernels/cuda/elementwise.h"
#include "kernels/cuda/encoder.h"
#include "kernels/cuda/gqa.h"
#include "kernels/cuda/norms.h"
#include "kernels/cuda/optimizer.h"

namespace zt::cuda {

namespace {

template <DType D>
using Elem = std::conditional_t<D == DType::kF32, float, half_t>;

CudaContext& ctx() { return CudaContext::get(); }
cudaStream_t st() { return ctx().stream(); }

template <DType D>
void linear_forward(Elem<D>* out, const Elem<D>* inp, const Elem<D>* weight, const Elem<D>* bias,
                    const Elem<D>* residual, int64_t N, int C, int OC) {
  check_ok(cuda::linear_forward(ctx().lt(), D, out, inp, weight, bias, residual, N, C, OC, st()), "linear_forward");
}

// dinp (stored as `out`) = dout @ weight when dinp is not null; dweight, dbias +=.
template <DType D>
void linear_backward_as(DType out, void* dinp, float* dweight, float* dbias, const Elem<D>* dout, const Elem<D>* inp,
                        const Elem<D>* weight, int64_t N, int C, int OC) {
  if (dinp != nullptr) {
    check_ok(linear_backward_input(ctx().lt(), D, out, dinp, dout, weight, N, C, OC, st()), "linear_backward (input)");
  }
  check_ok(linear_backward_weights(ctx().lt(), D, dweight, dout, inp, N, C, OC, st()), "linear_backward (weight)");
  if (dbias != nullptr) {
    float* ws = static_cast<float*>(ctx().scratch(Scratch::kReduce, 4 * bias_grad_workspace_floats(N, OC)));
    bias_grad(D, dbias, dout, N, OC, ws, st());
  }
}

template <DType D>
void linear_backward(Elem<D>* dinp, float* dweight, float* dbias, const Elem<D>* dout, const Elem<D>* inp,
                     const Elem<D>* weight, int64_t N, int C, int OC) {
  linear_backward_as<D>(D, dinp, dweight, dbias, dout, inp, weight, N, C, OC);
}

template <DType D>
void linear_backward_partial(float* dinp, float* dweight, float* dbias, const Elem<D>* dout, const Elem<D>* inp,
                             const Elem<D>* weight, int64_t N, int C, int OC) {
  linear_backward_as<D>(DType::kF32, dinp, dweight, dbias, dout, inp, weight, N, C, OC);
}

template <DType D>
void linear_partial(float* partial, const Elem<D>* inp, const Elem<D>* weight, int64_t N, int C, int OC) {
  Matmul mm = column_major(true, false, OC, N, C, D, DType::kF32, weight, C, inp, C, partial, OC);
  check_ok(ctx().lt().run(mm, st()), "linear_partial");
}

template <DType D>
void bias_residual(Elem<D>* out, const Elem<D>* residual, const float* partial, const Elem<D>* bias, int64_t N, int C) {
  cuda::bias_residual(D, out, residual, partial, bias, N, C, st());
}

// The 16-bit attention in fp32 (attention_in_fp32): widened inputs, the fp32 kernels,
// outputs rounded once; in (n_in[i] elements each) are widened into consecutive fp32
// buffers, returned in order.
template <DType D>
std::vector<float*> widened(std::initializer_list<std::pair<const void*, int64_t>> in, int64_t extra) {
  int64_t total = extra;
  for (const auto& [p, n] : in) total += n;
  float* buf = static_cast<float*>(ctx().scratch(Scratch::kWide, 4 * static_cast<size_t>(total)));
  std::vector<float*> out;
  for (const auto& [p, n] : in) {
    cast_to_f32(D, buf, static_cast<const half_t*>(p), n, st());
    out.push_back(buf);
    buf += n;
  }
  out.push_back(buf);  // the extra space
  return out;
}

// 16-bit attention runs as flash attention where it serves the shape (flash_attention.h),
// unless ZT_CUDA_ATTENTION asks for the materialized kernels.
bool uses_flash(DType d, int T, int C, int NH) {
  return !attention_in_fp32() && !attention_materialized() && flash_attention_serves(d, T, C, NH);
}

template <DType D>
void attention_forward(Elem<D>* atty, Elem<D>* att, const Elem<D>* qkv, int B, int T, int C, int NH) {
  if constexpr (D != DType::kF32) {
    if (attention_in_fp32()) {
      const int64_t nqkv = int64_t{B} * T * 3 * C, ny = int64_t{B} * T * C, np = int64_t{B} * NH * T * T;
      const std::vector<float*> w = widened<D>({{qkv, nqkv}}, ny + np);
      float *y = w[1], *p = w[1] + ny;
      void* ws = ctx().scratch(Scratch::kWorkspace, attention_workspace_bytes(DType::kF32, B, T, C, NH));
      check_ok(cuda::attention_forward(ctx().lt(), DType::kF32, y, p, w[0], B, T, C, NH, ws, st()), "attention_forward");
      cast_from_f32(D, atty, y, ny, st());
      cast_from_f32(D, att, p, np, st());
      return;
    }
  }
  if (uses_flash(D, T, C, NH)) {
    check_ok(cuda::flash_attention_forward(D, atty, att, qkv, B, T, C, NH, st()), "attention_forward (flash)");
    return;
  }
  void* ws = ctx().scratch(Scratch::kWorkspace, attention_workspace_bytes(D, B, T, C, NH));
  check_ok(cuda::attention_forward(ctx().lt(), D, atty, att, qkv, B, T, C, NH, ws, st()), "attention_forward");
}

template <DType D>
void attention_backward(Elem<D>* dqkv, const Elem<D>* datty, const Elem<D>* qkv, const Elem<D>* att, int B, int T,
                        int C, int NH) {
  if constexpr (D != DType::kF32) {
    if (attention_in_fp32()) {
      const int64_t nqkv = int64_t{B} * T * 3 * C, ny = int64_t{B} * T * C, np = int64_t{B} * NH * T * T;
      const std::vector<float*> w = widened<D>({{datty, ny}, {qkv, nqkv}, {att, np}}, nqkv);
      void* ws = ctx().scratch(Scratch::kWorkspace, attention_workspace_bytes(DType::kF32, B, T, C, NH));
      check_ok(cuda::attention_backward(ctx().lt(), DType::kF32, w[3], w[0], w[1], w[2], B, T, C, NH, ws, st()),
               "attention_backward");
      cast_from_f32(D, dqkv, w[3], nqkv, st());
      return;
    }
  }
  if (uses_flash(D, T, C, NH)) {
    void* ws = ctx().scratch(Scratch::kWorkspace, flash_attention_workspace_bytes(B, T, NH));
    check_ok(cuda::flash_attention_backward(D, dqkv, datty, qkv, att, B, T, C, NH, ws, st(), flash_stores_ds()),
             "attention_backward (flash)");
    return;
  }
  void* ws = ctx().scratch(Scratch::kWorkspace, attention_workspace_bytes(D, B, T, C, NH));
  check_ok(cuda::attention_backward(ctx().lt(), D, dqkv, datty, qkv, att, B, T, C, NH, ws, st()),
           "attention_backward");
}

template <DType D>
void encoder_forward(Elem<D>* out, const int32_t* tokens, const Elem<D>* wte, const Elem<D>* wpe, int B, int T,
                     int C) {
  const size_t n = static_cast<size_t>(B) * T;
  auto* dt = static_cast<const int32_t*>(ctx().stage(Scratch::kTokens, tokens, n * sizeof(int32_t)));
  cuda::encoder_forward(D, out, dt, wte, wpe, B, T, C, st());
}

template <DType D>
void encoder_backward(float* dwte, float* dwpe, const Elem<D>* dout, const int32_t* tokens, int B, int T, int C) {
  const int64_t n = static_cast<int64_t>(B) * T;
  void* ws = ctx().scratch(Scratch::kBuckets, encoder_backward_workspace_bytes(n));
  cuda::encoder_backward(D, dwte, dwpe, dout, tokens, B, T, C, ws, st());
}

template <DType D>
void layernorm_forward(Elem<D>* out, float* mean, float* rstd, const Elem<D>* inp, const Elem<D>* weight,
                       const Elem<D>* bias, int64_t N, int C) {
  cuda::layernorm_forward(D, ctx().order(), out, mean, rstd, inp, weight, bias, N, C, st());
}

template <DType D>
void layernorm_backward(Elem<D>* dinp, float* dweight, float* dbias, const Elem<D>* dout, const Elem<D>* inp,
                        const Elem<D>* weight, const float* mean, const float* rstd, int64_t N, int C) {
  float* ws = static_cast<float*>(ctx().scratch(Scratch::kReduce, 4 * norm_workspace_floats(N, C)));
  cuda::layernorm_backward(D, ctx().order(), dinp, dweight, dbias, dout, inp, weight, mean, rstd, N, C, ws, st());
}

template <DType D>
void rmsnorm_forward(Elem<D>* out, float* rstd, const Elem<D>* inp, const Elem<D>* weight, int64_t N, int C,
                     float eps) {
  cuda::rmsnorm_forward(D, ctx().order(), out, rstd, inp, weight, N, C, eps, st());
}

template <DType D>
void rmsnorm_backward(Elem<D>* dinp, float* dweight, const Elem<D>* dout, const Elem<D>* inp, const Elem<D>* weight,
                      const float* rstd, int64_t N, int C) {
  float* ws = static_cast<float*>(ctx().scratch(Scratch::kReduce, 4 * norm_workspace_floats(N, C)));
  cuda::rmsnorm_backward(D, ctx().order(), dinp, dweight, dout, inp, weight, rstd, N, C, ws, st());
}

template <DType D>
void gelu_forward(Elem<D>* out, const Elem<D>* inp, int64_t n) { cuda::gelu_forward(D, out, inp, n, st()); }
template <DType D>
void gelu_backward(Elem<D>* dinp, const Elem<D>* inp, const Elem<D>* dout, int64_t n) {
  cuda::gelu_backward(D, dinp, inp, dout, n, st());
}
template <DType D>
void swiglu_forward(Elem<D>* out, const Elem<D>* gate, const Elem<D>* up, int64_t n) {
  cuda::swiglu_forward(D, out, gate, up, n, st());
}
template <DType D>
void swiglu_backward(Elem<D>* dgate, Elem<D>* dup, const Elem<D>* dout, const Elem<D>* gate, const Elem<D>* up,
                     int64_t n) {
  cuda::swiglu_backward(D, dgate, dup, dout, gate, up, n, st());
}
template <DType D>
void rope_forward(Elem<D>* out, const Elem<D>* inp, const float* freqs, int B, int T, int NH, int HD, int pos0) {
  rope_rotate(D, out, inp, freqs, B, T, NH, HD, pos0, 1.0f, st());
}
template <DType D>
void rope_backward(Elem<D>* dinp, const Elem<D>* dout, const float* freqs, int B, int T, int NH, int HD, int pos0) {
  rope_rotate(D, dinp, dout, freqs, B, T, NH, HD, pos0, -1.0f, st());
}
template <DType D>
void gqa_pack(Elem<D>* qkv, const Elem<D>* q, const Elem<D>* k, const Elem<D>* v, int64_t BT, int NH, int NKV, int HD) {
  cuda::gqa_pack(D, qkv, q, k, v, BT, NH, NKV, HD, st());
}
template <DType D>
void gqa_unpack(Elem<D>* dq, Elem<D>* dk, Elem<D>* dv, const Elem<D>* dqkv, int64_t BT, int NH, int NKV, int HD) {
  cuda::gqa_unpack(D, dq, dk, dv, dqkv, BT, NH, NKV, HD, st());
}

template <DType D>
void crossentropy_forward(float* losses, float* stats, const Elem<D>* logits, const int32_t* targets, int64_t N, int V,
                          int Vp) {
  auto* dt = static_cast<const int32_t*>(ctx().stage(Scratch::kTargets, targets, static_cast<size_t>(N) * 4));
  cuda::crossentropy_forward(D, ctx().order(), losses, stats, logits, dt, N, V, Vp, st());
}

template <DType D>
void crossentropy_backward(Elem<D>* dlogits, const Elem<D>* logits, const float* stats, const int32_t* targets,
                           float dloss, int64_t N, int V, int Vp) {
  auto* dt = static_cast<const int32_t*>(ctx().stage(Scratch::kTargets, targets, static_cast<size_t>(N) * 4));
  cuda::crossentropy_backward(D, ctx().order(), dlogits, logits, stats, dt, dloss, N, V, Vp, st());
}

template <DType D>
void to_f32(float* dst, const Elem<D>* src, int64_t n) {
  if constexpr (D == DType::kF32) {
    check_cuda(cudaMemcpyAsync(dst, src, static_cast<size_t>(n) * 4, cudaMemcpyDeviceToDevice, st()), "to_f32");
  } else {
    cast_to_f32(D, dst, src, n, st());
  }
}

template <DType D>
void from_f32(Elem<D>* dst, const float* src, int64_t n) {
  if constexpr (D == DType::kF32) {
    check_cuda(cudaMemcpyAsync(dst, src, static_cast<size_t>(n) * 4, cudaMemcpyDeviceToDevice, st()), "from_f32");
  } else {
    cast_from_f32(D, dst, src, n, st());
  }
}

// The step, then the compute copy: two stream-ordered kernels (the device keeps both
// operands in its own memory; no second host pass to save).
template <DType D>
void adamw_step_copy(Elem<D>* dst, float* p, const float* g, float* m, float* v, int64_t n, const AdamWArgs& a) {
  adamw_step(p, g, m, v, n, a, st());
  if (static_cast<void*>(dst) != static_cast<void*>(p)) from_f32<D>(dst, p, n);
}

// The vocabulary-parallel pieces exist only with tensor parallelism, which CUDA runs
// refuse before a model is built; reaching one is a broken invariant.
template <class... A>
void tensor_parallel_only(A...) {
  ZT_CHECK(false, "tensor-parallel kernels are not built for CUDA (several ranks with device cuda are refused)");
}

template <DType D>
void fill_activation_ops(ActivationOps<Elem<D>>* o) {
  o->compute = D;
  o->linear_forward = &linear_forward<D>;
  o->linear_backward = &linear_backward<D>;
  o->attention_forward = &attention_forward<D>;
  o->attention_backward = &attention_backward<D>;
  o->encoder_forward = &encoder_forward<D>;
  o->encoder_backward = &encoder_backward<D>;
  o->layernorm_forward = &layernorm_forward<D>;
  o->layernorm_backward = &layernorm_backward<D>;
  o->gelu_forward = &gelu_forward<D>;
  o->gelu_backward = &gelu_backward<D>;
  o->rmsnorm_forward = &rmsnorm_forward<D>;
  o->rmsnorm_backward = &rmsnorm_backward<D>;
  o->rope_forward = &rope_forward<D>;
  o->rope_backward = &rope_backward<D>;
  o->swiglu_forward = &swiglu_forward<D>;
  o->swiglu_backward = &swiglu_backward<D>;
  o->gqa_pack = &gqa_pack<D>;
  o->gqa_unpack = &gqa_unpack<D>;
  o->crossentropy_forward = &crossentropy_forward<D>;
  o->crossentropy_backward = &crossentropy_backward<D>;
  using A = Elem<D>;
  o->vocab_embedding_rows = &tensor_parallel_only<float*, const int32_t*, const A*, int64_t, int, const VocabSlice&>;
  o->embedding_finish = &tensor_parallel_only<A*, const float*, const A*, int64_t, int, int>;
  o->vocab_embedding_backward =
      &tensor_parallel_only<float*, float*, const A*, const int32_t*, int, int, int, const VocabSlice&>;
  o->vocab_xent_row_max = &tensor_parallel_only<float*, const A*, int64_t, const VocabSlice&>;
  o->vocab_xent_partials =
      &tensor_parallel_only<float*, float*, const float*, int, const A*, const int32_t*, int64_t, const VocabSlice&>;
  o->vocab_xent_backward =
      &tensor_parallel_only<A*, const A*, const float*, const int32_t*, float, int64_t, const VocabSlice&>;
  o->linear_partial = &linear_partial<D>;
  o->linear_backward_partial = &linear_backward_partial<D>;
  o->bias_residual = &bias_residual<D>;
  o->to_f32 = &to_f32<D>;
  o->from_f32 = &from_f32<D>;
  o->adamw_step_copy = &adamw_step_copy<D>;
}

// KernelOps' own entries (fp32 in every precision).
void gemm(Trans ta, Trans tb, int M, int N, int K, float alpha, const float* A, int lda, const float* B, int ldb,
          float beta, float* C, int ldc) {
  // Row-major C (M, N) = op(A) op(B) is column-major C^T (N, M) = op(B)^T op(A)^T.
  Matmul mm = column_major(tb == Trans::kYes, ta == Trans::kYes, N, M, K, DType::kF32, DType::kF32, B, ldb, A, lda, C,
                           ldc);
  mm.alpha = alpha;
  mm.beta = beta;
  mm.C = C;
  mm.ldc = ldc;
  check_ok(ctx().lt().run(mm, st()), "gemm");
}

void rope_table(float* freqs, int max_T, int HD, const double* inv_freq) {
  std::vector<float> host(static_cast<size_t>(max_T) * HD);
  zt::rope_table(host.data(), max_T, HD, inv_freq);  // the CPU's table, bit for bit
  check_cuda(cudaMemcpyAsync(freqs, host.data(), host.size() * 4, cudaMemcpyHostToDevice, st()), "rope_table");
  ctx().sync("rope_table");
}

void accumulate_f32(float* dst, const float* src, int64_t n) { accumulate(dst, src, n, st()); }
void scale_f32(float* x, float c, int64_t n) { cuda::scale(x, c, n, st()); }
void cast_to_bf16(bf16_t* dst, const float* src, int64_t n) { cast_from_f32(DType::kBF16, as_storage(dst), src, n, st()); }
void cast_from_bf16(float* dst, const bf16_t* src, int64_t n) { cast_to_f32(DType::kBF16, dst, as_storage(src), n, st()); }
void cast_to_f16(f16_t* dst, const float* src, int64_t n) { cast_from_f32(DType::kF16, as_storage(dst), src, n, st()); }
void cast_from_f16(float* dst, const f16_t* src, int64_t n) { cast_to_f32(DType::kF16, dst, as_storage(src), n, st()); }

// *acc (device) += the sum, stream-ordered: the step reads its norm once.
void sum_squares_f32(double* acc, const float* x, int64_t n) {
  auto* ws = static_cast<double*>(ctx().scratch(Scratch::kReduce, 8 * sum_squares_workspace_doubles(n)));
  sum_squares(acc, x, n, ctx().order(), ws, st(), /*accumulate=*/true);
}

void adamw_f32(float* p, const float* g, float* m, float* v, int64_t n, const AdamWArgs& a) {
  adamw_step(p, g, m, v, n, a, st());
}
void sgd_f32(float* p, const float* g, float* buf, int64_t n, const SgdArgs& a) { sgd_step(p, g, buf, n, a, st()); }
void lamb_apply_f32(float* p, const float* m, const float* v, int64_t n, const LambArgs& a, const LambSums* sums) {
  lamb_apply(p, m, v, n, a, sums, st());
}

void lamb_moments_f32(const float* p, const float* g, float* m, float* v, int64_t n, const LambArgs& a,
                      LambSums* sums) {
  auto* ws = static_cast<double*>(ctx().scratch(Scratch::kReduce, 8 * static_cast<size_t>(lamb_workspace_doubles(n))));
  lamb_moments(p, g, m, v, n, a, sums, ws, st());
}

void loss_sum_f32(double* out, const float* losses, const int32_t* targets, int64_t n) {
  loss_sum(out, losses, targets, n, st());
}

}  // namespace

KernelOps make_cuda_f32_ops() {
  KernelOps o{};
  fill_activation_ops<DType::kF32>(&o);
  o.kernel_isa = "cuda";
  o.gemm = &gemm;
  o.vocab_xent_finish = &tensor_parallel_only<float*, float*, const float*, const int32_t*, int64_t>;
  o.rope_table = &rope_table;
  o.accumulate = &accumulate_f32;
  o.scale = &scale_f32;
  o.cast_f32_to_bf16 = &cast_to_bf16;
  o.cast_bf16_to_f32 = &cast_from_bf16;
  o.cast_f32_to_f16 = &cast_to_f16;
  o.cast_f16_to_f32 = &cast_from_f16;
  o.sum_squares = &sum_squares_f32;
  o.adamw_step = &adamw_f32;
  o.lamb_moments = &lamb_moments_f32;
  o.lamb_apply = &lamb_apply_f32;
  o.loss_sum = &loss_sum_f32;
  o.sgd_step = &sgd_f32;
  return o;
}

ActivationOps<half_t> make_cuda_half_ops(DType compute) {
  ActivationOps<half_t> o{};
  if (compute == DType::kBF16) {
    fill_activation_ops<DType::kBF16>(&o);
  } else {
    fill_activation_ops<DType::kF16>(&o);
  }
  return o;
}

}  // namespace zt::cuda
