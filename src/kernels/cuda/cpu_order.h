// CpuOrder: which CPU kernel's arithmetic order a CUDA kernel reproduces. zerotrain's CPU
// kernels reduce a row in W vector lanes (each lane adding its elements in order), then
// in a fixed halving tree, and their fmadd is fused on AVX2 and AVX-512 but not on the
// scalar ISA. A CUDA kernel templated on the order gives the same bits as that CPU
// kernel: the backend picks the order of the host's active ISA (cpu_order_for).
// Thread-safety: plain values.
#pragma once

#include "core/cpu_features.h"

namespace zt::cuda {

struct CpuOrder {
  int width = 16;     // lanes per vector: 16 (AVX-512) or 8 (AVX2, scalar)
  bool fused = true;  // fmadd is one rounding (AVX2, AVX-512) or two (scalar)
};

inline CpuOrder cpu_order_for(Isa isa) {
  switch (isa) {
    case Isa::kAvx512: return {16, true};
    case Isa::kAvx2: return {8, true};
    case Isa::kScalar: return {8, false};
  }
  return {16, true};
}

}  // namespace zt::cuda
