// Every entry of the kernel tables by name (ZT_ACTIVATION_OPS_ENTRIES, ZT_KERNEL_OPS_ENTRIES,
// ZT_MOE_OPS_ENTRIES:
// the one list code that treats a table generically uses; a new entry is added here and
// the compiler then asks every wrapper for it), and wrap_tables(): a copy of a table whose
// every entry runs inside a Hook scope around the original. The guarded backend's hook
// opens its memory for the call; the CUDA backend's profiler times each call.
// Hook: a class with a constructor Hook(int entry) and a destructor, run around the call;
// entry indexes table_entry_name().
// Thread-safety: wrap once per (Hook, dtype) before the tables are used; calls are as
// thread-safe as the hook.
#pragma once

#include "kernels/kernel_ops.h"
#include "kernels/moe_ops.h"

#define ZT_ACTIVATION_OPS_ENTRIES(X)                                                                          \
  X(linear_forward) X(linear_backward) X(attention_forward) X(attention_backward) X(flash_attention_forward)   \
  X(flash_attention_backward) X(encoder_forward)                                                               \
  X(encoder_backward) X(layernorm_forward) X(layernorm_backward) X(gelu_forward) X(gelu_backward)             \
  X(rmsnorm_forward) X(rmsnorm_backward) X(rope_forward) X(rope_backward) X(swiglu_forward) X(swiglu_backward) \
  X(gqa_pack) X(gqa_unpack) X(crossentropy_forward) X(crossentropy_backward) X(vocab_embedding_rows)          \
  X(embedding_finish) X(vocab_embedding_backward) X(vocab_xent_row_max) X(vocab_xent_partials)                \
  X(vocab_xent_backward) X(linear_partial) X(linear_backward_partial) X(bias_residual) X(to_f32) X(from_f32) \
  X(adamw_step_copy) X(fake_quant)

#define ZT_KERNEL_OPS_ENTRIES(X)                                                                              \
  X(gemm) X(vocab_xent_finish) X(rope_table) X(accumulate) X(scale) X(cast_f32_to_bf16) X(cast_bf16_to_f32)  \
  X(cast_f32_to_f16) X(cast_f16_to_f32) X(loss_sum) X(sum_squares) X(adamw_step) X(lamb_moments) X(lamb_apply) X(sgd_step)

#define ZT_MOE_OPS_ENTRIES(X)                                                                                 \
  X(dispatch) X(dispatch_backward) X(combine) X(combine_backward) X(experts_forward) X(experts_backward)     \
  X(experts_scratch_floats) X(mix_forward) X(mix_backward)

namespace zt {

enum class TableEntry : int {
#define ZT_ENTRY_ENUM(name) k_##name,
  ZT_ACTIVATION_OPS_ENTRIES(ZT_ENTRY_ENUM) ZT_KERNEL_OPS_ENTRIES(ZT_ENTRY_ENUM) ZT_MOE_OPS_ENTRIES(ZT_ENTRY_ENUM)
#undef ZT_ENTRY_ENUM
      kCount
};

inline const char* table_entry_name(int entry) {
  static const char* const names[] = {
#define ZT_ENTRY_NAME(name) #name,
      ZT_ACTIVATION_OPS_ENTRIES(ZT_ENTRY_NAME) ZT_KERNEL_OPS_ENTRIES(ZT_ENTRY_NAME) ZT_MOE_OPS_ENTRIES(ZT_ENTRY_NAME)
#undef ZT_ENTRY_NAME
  };
  return entry >= 0 && entry < static_cast<int>(TableEntry::kCount) ? names[entry] : "?";
}

namespace table_wrap_detail {

// The table a wrapped entry forwards to: one per (hook, table type, dtype).
template <class Hook, class Ops, DType D>
const Ops*& base() {
  static const Ops* t = nullptr;
  return t;
}

template <class Hook, DType D, TableEntry E, auto M>
struct Entry;

template <class Hook, DType D, TableEntry E, class Ops, class R, class... A, R (*Ops::*M)(A...)>
struct Entry<Hook, D, E, M> {
  static R call(A... args) {
    Hook scope(static_cast<int>(E));
    return (base<Hook, Ops, D>()->*M)(args...);
  }
};

template <class Hook, DType D, class A>
void wrap_activation(ActivationOps<A>* o) {
  using Ops = ActivationOps<A>;
  // An entry the backend does not have stays null (the model asks before it calls one).
#define ZT_WRAP_ENTRY(name) \
  o->name = o->name == nullptr ? nullptr : &Entry<Hook, D, TableEntry::k_##name, &Ops::name>::call;
  ZT_ACTIVATION_OPS_ENTRIES(ZT_WRAP_ENTRY)
#undef ZT_WRAP_ENTRY
}

}  // namespace table_wrap_detail

// A copy of `base` (the f32 table) whose every entry runs inside Hook. `base` must outlive it.
template <class Hook>
KernelOps wrap_kernel_ops(const KernelOps& base) {
  using namespace table_wrap_detail;
  table_wrap_detail::base<Hook, KernelOps, DType::kF32>() = &base;
  table_wrap_detail::base<Hook, ActivationOps<float>, DType::kF32>() = &base;
  KernelOps o = base;
  wrap_activation<Hook, DType::kF32, float>(&o);
#define ZT_WRAP_ENTRY(name) o.name = &Entry<Hook, DType::kF32, TableEntry::k_##name, &KernelOps::name>::call;
  ZT_KERNEL_OPS_ENTRIES(ZT_WRAP_ENTRY)
#undef ZT_WRAP_ENTRY
  return o;
}

// The same for a 16-bit table of compute dtype D (kBF16 or kF16).
template <class Hook, DType D>
ActivationOps<half_t> wrap_half_ops(const ActivationOps<half_t>& base) {
  using namespace table_wrap_detail;
  table_wrap_detail::base<Hook, ActivationOps<half_t>, D>() = &base;
  ActivationOps<half_t> o = base;
  wrap_activation<Hook, D, half_t>(&o);
  return o;
}

// The same for the MoE table (kernels/moe_ops.h).
template <class Hook>
MoeOps wrap_moe_ops(const MoeOps& base) {
  using namespace table_wrap_detail;
  table_wrap_detail::base<Hook, MoeOps, DType::kF32>() = &base;
  MoeOps o = base;
#define ZT_WRAP_ENTRY(name) o.name = &Entry<Hook, DType::kF32, TableEntry::k_##name, &MoeOps::name>::call;
  ZT_MOE_OPS_ENTRIES(ZT_WRAP_ENTRY)
#undef ZT_WRAP_ENTRY
  return o;
}

}  // namespace zt
