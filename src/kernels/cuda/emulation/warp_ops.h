// warp_ops.cuh's instructions for the CPU emulation (lanes.h): each computes its lane's
// result from every lane's operands by the layouts warp_ops.cuh states (the PTX ISA's).
// - ldmatrix: each lane posts its row address; lane (g, t) reads row g, columns 2t and 2t + 1
//   of each matrix m (rows posted by lanes 8m .. 8m + 7), or column g, rows 2t and 2t + 1
//   with .trans.
// - mma m16n8k16: each lane posts its A and B registers; its four results are the exact
//   products of the 16-bit operands summed in double onto its accumulators and rounded once
//   to fp32 (the tensor cores' internal order is not specified; the tests' bounds allow any
//   order).
// - cvt_pack2: H::store twice (the hardware conversion's bits, except a NaN's payload).
// Included by warp_ops.cuh in place of the PTX under ZT_CUDA_EMULATION, inside whatever
// namespace the translation unit calls zt::cuda (cuda_keywords.h renames it).
#pragma once

#include <cstdint>

#include "kernels/cuda/emulation/lanes.h"
#include "kernels/cuda/half_bits.cuh"

namespace zt::cuda {

inline void ldmatrix_emulated(uint32_t (&r)[4], const uint16_t* row, bool trans) {
  const uint64_t mine = reinterpret_cast<uintptr_t>(row);
  const uint64_t* all = ::zt::emu::post_and_wait(&mine, 1);
  const int lane = ::zt::emu::lane_id(), g = lane / 4, t = lane % 4;
  auto at = [&](int m, int i, int j) {  // element (i, j) of matrix m
    return reinterpret_cast<const uint16_t*>(all[(8 * m + i) * ::zt::emu::kSlotWords])[j];
  };
  for (int m = 0; m < 4; ++m) {
    const uint32_t lo = trans ? at(m, 2 * t, g) : at(m, g, 2 * t);
    const uint32_t hi = trans ? at(m, 2 * t + 1, g) : at(m, g, 2 * t + 1);
    r[m] = lo | (hi << 16);
  }
}

inline void ldmatrix_x4(uint32_t (&r)[4], const uint16_t* row) { ldmatrix_emulated(r, row, false); }
inline void ldmatrix_x4_trans(uint32_t (&r)[4], const uint16_t* row) { ldmatrix_emulated(r, row, true); }

template <class H>
void mma_m16n8k16(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
  const uint64_t mine[6] = {a[0], a[1], a[2], a[3], b[0], b[1]};
  const uint64_t* all = ::zt::emu::post_and_wait(mine, 6);
  const int lane = ::zt::emu::lane_id(), g = lane / 4, t = lane % 4;
  auto half = [&](int owner, int word, int k) {  // the value in half k % 2 of register `word` of lane `owner`
    const uint64_t w = all[owner * ::zt::emu::kSlotWords + word];
    return static_cast<double>(H::load(static_cast<uint16_t>(w >> (16 * (k % 2)))));
  };
  auto A = [&](int r, int k) { return half((r % 8) * 4 + (k % 8) / 2, (r >= 8 ? 1 : 0) + (k >= 8 ? 2 : 0), k); };
  auto B = [&](int k, int n) { return half(n * 4 + (k % 8) / 2, 4 + (k >= 8 ? 1 : 0), k); };
  for (int i = 0; i < 4; ++i) {
    const int r = g + 8 * (i / 2), n = 2 * t + i % 2;
    double acc = d[i];
    for (int k = 0; k < 16; ++k) acc += A(r, k) * B(k, n);
    d[i] = static_cast<float>(acc);
  }
}

template <class H>
uint32_t cvt_pack2(float lo, float hi) {
  return static_cast<uint32_t>(H::store(lo)) | (static_cast<uint32_t>(H::store(hi)) << 16);
}

}  // namespace zt::cuda
