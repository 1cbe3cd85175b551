// Internal to the half_ops*.cc files: the per-thread fp32 scratch, the row-chunk loop,
// and one function per file that fills its part of a table. Each kernel is a function
// template on the compute dtype D (kBF16 or kF16); ZT_HALF_PICK takes the instance for
// the table being filled.
// Thread-safety: scratch is thread_local; everything else is pure.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <utility>

#include "kernels/activation_ops.h"
#include "tensor/dtype.h"
#include "kernels/cpu/half_convert.h"
#include "kernels/cpu/half_ops.h"

namespace zt {

// Slot `slot` (0 .. kHalfScratchSlots - 1) of the calling thread's fp32 scratch, at least
// n floats; it only grows and is kept for the next call. Contents are unspecified.
constexpr int kHalfScratchSlots = 5;
float* half_scratch(int slot, size_t n);

// The calling thread's buffer for a widened weight matrix (half_rows' HalfWeight: the f16
// linear layers), at least n floats. It only grows and is kept (advised for huge pages before
// its first touch), so each call widens into memory already mapped: a buffer allocated per call
// came back from the allocator unmapped, and faulting in and zeroing GPT-2's 154 MB LM head
// twice a step took longer than the step's GEMMs. Contents are unspecified.
float* half_weight_scratch(size_t n);

// Elementwise ops work on chunks of half the L2 a slot, each thread on its own chunks (a
// chunk's two widened inputs stay in the core's cache).
inline int64_t half_flat_chunk() { return half_cache_floats() / 2; }

// Calls f(r0, n) for consecutive chunks [r0, r0 + n) of [0, N), chunk_rows rows each
// (the last one shorter), in order.
template <typename F>
void for_each_chunk(int64_t N, int64_t chunk_rows, F&& f) {
  for (int64_t r0 = 0; r0 < N; r0 += chunk_rows) f(r0, N - r0 < chunk_rows ? N - r0 : chunk_rows);
}

// The 16-bit form of an fp32 elementwise kernel: chunk by chunk, input i is widened into
// scratch slot i, f(x, n) runs the fp32 kernel on x[0..NIn) in place, and each output
// (pointer, slot) is narrowed from its slot. Every 16-bit elementwise kernel of the tables
// is this adapter over the f32 table's kernel, so both compute the same fp32 values. The
// elements are independent, so the chunks run on all threads at once, each in the thread's
// own scratch (the fp32 kernel's own loop is then a one-thread team).
template <DType D, size_t NIn, size_t NOut, typename F>
void half_flat(int64_t count, const std::array<const half_t*, NIn>& in, const std::array<std::pair<half_t*, int>, NOut>& out,
               F&& f) {
  const int64_t chunk = half_flat_chunk(), chunks = (count + chunk - 1) / chunk;
#pragma omp parallel if (chunks > 1)
  {
    std::array<float*, NIn> x;
    for (size_t i = 0; i < NIn; ++i) x[i] = half_scratch(static_cast<int>(i), static_cast<size_t>(chunk));
#pragma omp for schedule(static)
    for (int64_t c = 0; c < chunks; ++c) {
      const int64_t i0 = c * chunk, n = count - i0 < chunk ? count - i0 : chunk;
      for (size_t i = 0; i < NIn; ++i) half_to_f32(D, x[i], in[i] + i0, n);
      f(x, n);
      for (const auto& [p, slot] : out) f32_to_half(D, p + i0, x[static_cast<size_t>(slot)], n);
    }
  }
}

// Fillers, one per file: each sets its fields of *ops for ops->compute.
void fill_half_elementwise_ops(ActivationOps<half_t>* ops);  // layernorm, gelu, cross-entropy, casts
void fill_half_sequence_ops(ActivationOps<half_t>* ops);     // attention, encoder
void fill_half_linear_ops(ActivationOps<half_t>* ops);       // linear, and its fp32-result tp forms
void fill_half_tp_ops(ActivationOps<half_t>* ops);           // tensor-parallel halves
void fill_half_llama_ops(ActivationOps<half_t>* ops);        // rmsnorm, rope, swiglu, gqa

}  // namespace zt

// The instance of kernel template `fn` for the table being filled.
#define ZT_HALF_PICK(ops, fn) ((ops)->compute == ::zt::DType::kBF16 ? &fn<::zt::DType::kBF16> : &fn<::zt::DType::kF16>)
