// The bulk bf16 casts (bf16_convert.h): the kernel table's one-thread casts, split over the threads.
#include "kernels/cpu/bf16_convert.h"

#include "core/cpu_features.h"
#include "kernels/cpu/cast_blocks.h"
#include "kernels/cpu/kernel_table.h"

namespace zt {

namespace {

constexpr int64_t kBlock = 16384;  // elements per OpenMP work item

// The ISA whose casts run: the active one, or the scalar code while ZT_ISA is invalid (every
// path gives the same bits, and start-up and doctor report the variable; doctor must not abort).
Isa cast_isa() { return active_isa_status().ok() ? active_isa() : Isa::kScalar; }

}  // namespace

void cast_f32_to_bf16(bf16_t* dst, const float* src, int64_t n) {
  static const NarrowFn path = cpu_kernels_for(cast_isa()).narrow_bf16;
  cast_blocks(bits_of(dst), src, n, kBlock, path);
}

void cast_bf16_to_f32(float* dst, const bf16_t* src, int64_t n) {
  static const WidenFn path = cpu_kernels_for(cast_isa()).widen_bf16;
  cast_blocks(dst, bits_of(src), n, kBlock, path);
}

}  // namespace zt
