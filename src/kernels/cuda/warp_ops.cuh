// The warp-wide PTX instructions of the tensor-core tile kernels (flash_tiles.cuh), one
// function each: ldmatrix (.x4, plain and .trans), mma.sync m16n8k16 with 16-bit operands and
// fp32 accumulators, and the paired fp32 -> 16-bit conversion. Built with ZT_CUDA_EMULATION
// (the CPU tests of emulation/), the same functions come from emulation/warp_ops.h, which
// computes what the PTX ISA defines for each lane; the kernels' code is the same either way.
//
// Layouts (PTX ISA; g = lane / 4, t = lane % 4; two 16-bit values a register, the first in
// the low half):
// - ldmatrix .x4: lane l gives the address of row l % 8 (16 bytes) of matrix l / 8; lane
//   (g, t) receives r[m] = row g, columns 2t and 2t + 1 of matrix m, or with .trans column g,
//   rows 2t and 2t + 1;
// - mma A (16 x 16): a[0] = (g, 2t..2t+1), a[1] = (g+8, 2t..), a[2] = (g, 2t+8..),
//   a[3] = (g+8, 2t+8..); B (16 x 8, k x n): b[0] = (k 2t..2t+1, n g), b[1] = (k 2t+8.., n g);
//   C and D (16 x 8): c[0..1] = (g, 2t..2t+1), c[2..3] = (g+8, 2t..2t+1).
// Invariants: ldmatrix row addresses are 16-byte aligned shared memory.
#pragma once

#include <cstdint>
#include <type_traits>

#include "kernels/cuda/half_bits.cuh"

#ifdef ZT_CUDA_EMULATION
#include "kernels/cuda/emulation/warp_ops.h"
#else

namespace zt::cuda {

// The four 8 x 8 matrices whose rows this warp's lanes address (see the layout above).
__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], const uint16_t* row) {
  const unsigned a = static_cast<unsigned>(__cvta_generic_to_shared(row));
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(a));
}

// The same four matrices, each transposed.
__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t (&r)[4], const uint16_t* row) {
  const unsigned a = static_cast<unsigned>(__cvta_generic_to_shared(row));
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(a));
}

// d += a b on the tensor cores, 16-bit operands of the storage tag H (Bf16 or F16).
template <class H>
__device__ __forceinline__ void mma_m16n8k16(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
  if constexpr (std::is_same_v<H, Bf16>) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  } else {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  }
}

// Two fp32 values rounded to H's storage, the first in the low half, by one hardware
// conversion (cvt.rn.{bf16x2,f16x2}.f32: round to nearest even, subnormals kept, overflow
// to infinity), which gives H::store's bits for every number; only a NaN's payload may
// differ (still a NaN). H::store's bit arithmetic takes about nine instructions a value.
template <class H>
__device__ __forceinline__ uint32_t cvt_pack2(float lo, float hi) {
  uint32_t d;
  if constexpr (std::is_same_v<H, Bf16>) {
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;\n" : "=r"(d) : "f"(hi), "f"(lo));  // first operand: upper half
  } else {
    asm("cvt.rn.f16x2.f32 %0, %1, %2;\n" : "=r"(d) : "f"(hi), "f"(lo));
  }
  return d;
}

}  // namespace zt::cuda

#endif  // ZT_CUDA_EMULATION
