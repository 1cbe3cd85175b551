// The CPU f32 backend: a KernelOps table assembled from the ISA-dispatched elementwise
// kernels (kernels/cpu/kernel_table.h, chosen by active_isa()) and the GEMM-based layers
// (linear, attention: gemm_path() picks OpenBLAS or oneDNN per shape class); arenas are
// 64-byte aligned host memory, zeroed and copied with OpenMP.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "backend/backend.h"
#include "backend/cpu/cpu_profile.h"
#include "backend/cpu/guarded_backend.h"
#include "backend/table_wrap.h"
#ifdef ZT_HAVE_CUDA
#include "backend/cuda/cuda_backend.h"
#endif
#include "core/cpu_features.h"
#include "core/huge_pages.h"
#include "kernels/cpu/fake_quant.h"
#include "kernels/cpu/attention.h"
#include "kernels/cpu/flash_attention.h"
#include "kernels/cpu/elementwise.h"
#include "kernels/cpu/encoder.h"
#include "kernels/cpu/gemm.h"
#include "kernels/cpu/gemm_bf16.h"
#include "kernels/cpu/half_ops.h"
#include "kernels/cpu/gemm_path.h"
#include "kernels/cpu/gqa.h"
#include "kernels/cpu/half_convert.h"
#include "kernels/cpu/kernel_table.h"
#include "kernels/cpu/linear.h"
#include "kernels/cpu/moe_dispatch.h"
#include "kernels/cpu/moe_experts.h"
#include "kernels/cpu/moe_mix.h"
#include "kernels/cpu/rope.h"
#include "kernels/cpu/vocab_parallel_kernels.h"

namespace zt {

namespace {

void sum_squares_into(double* acc, const float* x, int64_t n) { *acc += cpu_kernels().sum_squares(x, n); }

// fp32 compute: the parameters are their own compute copy; dst is only ever p.
void adamw_step_copy_f32(float* dst, float* p, const float* g, float* m, float* v, int64_t n, const AdamWArgs& a) {
  cpu_kernels().adamw_step(p, g, m, v, n, a);
  if (dst != p) copy_f32(dst, p, n);
}

KernelOps make_cpu_f32_ops(const KernelTable& k) {
  KernelOps o;
  o.compute = DType::kF32;
  o.kernel_isa = isa_name(k.isa);
  o.gemm = &sgemm;
  o.linear_forward = &linear_forward;
  o.linear_backward = &linear_backward;
  o.attention_forward = &attention_forward;
  o.attention_backward = &attention_backward;
  o.flash_attention_forward = &flash_attention_forward;
  o.flash_attention_backward = &flash_attention_backward;
  o.encoder_forward = &encoder_forward;
  o.encoder_backward = &encoder_backward;
  o.layernorm_forward = k.layernorm_forward;
  o.layernorm_backward = k.layernorm_backward;
  o.gelu_forward = k.gelu_forward;
  o.gelu_backward = k.gelu_backward;
  o.rmsnorm_forward = k.rmsnorm_forward;
  o.rmsnorm_backward = k.rmsnorm_backward;
  o.rope_table = &rope_table;
  o.rope_forward = &rope_forward;
  o.rope_backward = &rope_backward;
  o.swiglu_forward = k.swiglu_forward;
  o.swiglu_backward = k.swiglu_backward;
  o.gqa_pack = &gqa_pack;
  o.gqa_unpack = &gqa_unpack;
  o.crossentropy_forward = k.crossentropy_forward;
  o.crossentropy_backward = k.crossentropy_backward;
  o.vocab_embedding_rows = &vocab_embedding_rows;
  o.embedding_finish = &embedding_finish;
  o.linear_partial = &linear_partial;
  o.linear_backward_partial = &linear_backward;
  o.vocab_embedding_backward = &vocab_embedding_backward;
  o.vocab_xent_row_max = &vocab_xent_row_max;
  o.vocab_xent_partials = &vocab_xent_partials;
  o.vocab_xent_finish = &vocab_xent_finish;
  o.vocab_xent_backward = &vocab_xent_backward;
  o.bias_residual = &bias_residual;
  o.accumulate = &accumulate;
  o.scale = &scale_f32;
  o.cast_f32_to_bf16 = &cast_f32_to_bf16;
  o.cast_bf16_to_f32 = &cast_bf16_to_f32;
  o.cast_f32_to_f16 = &f32_to_f16;
  o.cast_f16_to_f32 = &f16_to_f32;
  o.to_f32 = &copy_f32;
  o.from_f32 = &copy_f32;
  o.adamw_step_copy = &adamw_step_copy_f32;
  o.loss_sum = &masked_loss_sum;  // kernel_args.h: the one loop, shared with CUDA
  o.sum_squares = &sum_squares_into;
  o.adamw_step = k.adamw_step;
  o.lamb_moments = k.lamb_moments;
  o.lamb_apply = k.lamb_apply;
  o.sgd_step = &sgd_step;
  o.fake_quant = &fake_quant;
  return o;
}

// How the 16-bit GEMMs run here: oneDNN's bf16 kernel (AMX or AVX-512 BF16) or its fp32
// fallback; f16 always widens to the fp32 GEMM path (oneDNN 2.6 has f16 matmul only on
// AVX512-FP16 CPUs, which the build does not target).
std::string half_gemm_description(DType compute) {
  if (compute == DType::kF16) return "f16 widened to fp32, " + gemm_path().describe();
  StatusOr<std::string> impl = bf16_gemm_impl(256, 256, 256);
  const std::string blocks = bf16_vocabulary_blocks();
  return "oneDNN bf16 (" + (impl.ok() ? impl.value() : impl.status().message()) + ")" +
         (blocks.empty() ? "" : "; " + blocks);
}

constexpr MoeOps kCpuMoeOps = {moe_dispatch,          moe_dispatch_backward, moe_combine,
                                moe_combine_backward,  moe_experts_forward,   moe_experts_backward,
                                moe_experts_scratch_floats, moe_mix_forward,     moe_mix_backward};

class CpuBackend final : public Backend {
 public:
  explicit CpuBackend(DType compute)
      : compute_(compute),
        ops_(make_cpu_f32_ops(cpu_kernels())),
        half_(compute == DType::kF32 ? nullptr : &cpu_half_ops(compute)) {
    if (!cpu_profiling_requested()) return;  // every entry timed (cpu_profile.h)
    static const KernelOps base = ops_;      // the wrapped entries forward to it for the process's life
    ops_ = wrap_kernel_ops<CpuProfileScope>(base);
    if (compute == DType::kBF16) half_ = &(profiled_half_ = wrap_half_ops<CpuProfileScope, DType::kBF16>(*half_));
    if (compute == DType::kF16) half_ = &(profiled_half_ = wrap_half_ops<CpuProfileScope, DType::kF16>(*half_));
  }

  Device device() const override { return Device::kCpu; }
  DType compute_dtype() const override { return compute_; }
  bool host() const override { return true; }
  const KernelOps& ops() const override { return ops_; }
  const ActivationOps<half_t>* half_ops() const override { return half_; }
  const MoeOps* moe_ops() const override { return &kCpuMoeOps; }
  std::string describe() const override {
    if (compute_ == DType::kF32) {
      return std::string("cpu f32, ") + ops_.kernel_isa + " kernels, gemm: " + gemm_path().describe();
    }
    return std::string("cpu ") + dtype_name(compute_) + " (fp32 master weights), " + ops_.kernel_isa +
           " kernels in chunks of the " + std::to_string(l2_cache_bytes() >> 10) + " KiB L2, gemm: " +
           half_gemm_description(compute_);
  }

  StatusOr<Arena> allocate(size_t count, DType dtype, const char* what) const override {
    if (count == 0) return Arena(this, nullptr, 0, dtype);
    const size_t bytes = ((count * dtype_size(dtype) + 63) / 64) * 64;
    void* data = std::aligned_alloc(64, bytes);
    if (data == nullptr) {
      return Status::ResourceExhausted("out of memory: cannot allocate " + std::to_string(bytes) + " bytes for " + what +
                                       "; use a higher ZeRO stage, more ranks or a smaller model");
    }
    advise_huge_pages(data, bytes);  // before the first touch, so the zeroing faults in 2 MiB pages
    parallel_zero(data, bytes);
    return Arena(this, data, count, dtype);
  }
  void copy(void* dst, const void* src, size_t bytes) const override { parallel_copy(dst, src, bytes); }
  void zero(void* dst, size_t bytes) const override { parallel_zero(dst, bytes); }

 protected:
  void release(void* data, size_t) const override { std::free(data); }

 private:
  DType compute_;
  KernelOps ops_;
  const ActivationOps<half_t>* half_;
  ActivationOps<half_t> profiled_half_{};  // ZT_CPU_PROFILE: half_'s entries, timed
};

}  // namespace

const Backend& plain_cpu_backend(DType compute) {
  static const CpuBackend f32(DType::kF32);
  static const CpuBackend bf16(DType::kBF16);
  static const CpuBackend f16(DType::kF16);
  return compute == DType::kF32 ? f32 : compute == DType::kBF16 ? bf16 : f16;
}

const Backend& cpu_backend() {
  return guarded_backend_requested() ? guarded_cpu_backend(DType::kF32) : plain_cpu_backend(DType::kF32);
}

StatusOr<const Backend*> backend_for(Device device, DType compute) {
  if (device == Device::kCuda) {
#ifdef ZT_HAVE_CUDA
    return cuda_backend(compute);
#else
    return Status::Unimplemented("device cuda: this zerotrain was built without the CUDA backend (ZT_CUDA=off, or no "
                                 "CUDA toolkit when it was built)");
#endif
  }
  return guarded_backend_requested() ? &guarded_cpu_backend(compute) : &plain_cpu_backend(compute);
}

Status check_backend_environment() {
  ZT_RETURN_IF_ERROR(active_isa_status());
  return gemm_path_status();
}

bool backend_environment_ok() {
  const Status s = check_backend_environment();
  if (!s.ok()) std::fprintf(stderr, "zerotrain: %s\n", s.message().c_str());
  return s.ok();
}

}  // namespace zt
