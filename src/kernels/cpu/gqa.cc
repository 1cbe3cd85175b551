// gqa_pack / gqa_unpack (gqa.h), one template over the storage type.
#include "kernels/cpu/gqa.h"

#include <cstring>

#include "core/half_bits.h"

namespace zt {

namespace {

struct F32Elems {
  static float load(float x) { return x; }
  static float store(float x) { return x; }
};
template <DType D>
struct HalfElems {
  static float load(half_t x) { return D == DType::kBF16 ? bf16_bits_to_f32(x.bits) : f16_bits_to_f32(x.bits); }
  static half_t store(float x) { return half_t{D == DType::kBF16 ? f32_to_bf16_bits(x) : f32_to_f16_bits(x)}; }
};

template <class A>
void pack(A* qkv, const A* q, const A* k, const A* v, int64_t BT, int NH, int NKV, int HD) {
  const int64_t C = static_cast<int64_t>(NH) * HD, KV = static_cast<int64_t>(NKV) * HD;
  const int rep = NH / NKV;
  const size_t head_bytes = sizeof(A) * static_cast<size_t>(HD);
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < BT; ++i) {
    A* row = qkv + i * 3 * C;
    std::memcpy(row, q + i * C, sizeof(A) * static_cast<size_t>(C));
    for (int h = 0; h < NH; ++h) {
      std::memcpy(row + C + h * HD, k + i * KV + (h / rep) * HD, head_bytes);
      std::memcpy(row + 2 * C + h * HD, v + i * KV + (h / rep) * HD, head_bytes);
    }
  }
}

template <class A, class E>
void unpack(A* dq, A* dk, A* dv, const A* dqkv, int64_t BT, int NH, int NKV, int HD) {
  const int64_t C = static_cast<int64_t>(NH) * HD, KV = static_cast<int64_t>(NKV) * HD;
  const int rep = NH / NKV;
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < BT; ++i) {
    const A* row = dqkv + i * 3 * C;
    std::memcpy(dq + i * C, row, sizeof(A) * static_cast<size_t>(C));
    for (int g = 0; g < NKV; ++g) {
      for (int e = 0; e < HD; ++e) {
        float sk = 0.0f, sv = 0.0f;
        for (int r = 0; r < rep; ++r) {
          sk += E::load(row[C + (g * rep + r) * HD + e]);
          sv += E::load(row[2 * C + (g * rep + r) * HD + e]);
        }
        dk[i * KV + g * HD + e] = E::store(sk);
        dv[i * KV + g * HD + e] = E::store(sv);
      }
    }
  }
}

}  // namespace

void gqa_pack(float* qkv, const float* q, const float* k, const float* v, int64_t BT, int NH, int NKV, int HD) {
  pack(qkv, q, k, v, BT, NH, NKV, HD);
}

void gqa_unpack(float* dq, float* dk, float* dv, const float* dqkv, int64_t BT, int NH, int NKV, int HD) {
  unpack<float, F32Elems>(dq, dk, dv, dqkv, BT, NH, NKV, HD);
}

template <DType D>
void half_gqa_pack(half_t* qkv, const half_t* q, const half_t* k, const half_t* v, int64_t BT, int NH, int NKV,
                   int HD) {
  pack(qkv, q, k, v, BT, NH, NKV, HD);
}

template <DType D>
void half_gqa_unpack(half_t* dq, half_t* dk, half_t* dv, const half_t* dqkv, int64_t BT, int NH, int NKV, int HD) {
  unpack<half_t, HalfElems<D>>(dq, dk, dv, dqkv, BT, NH, NKV, HD);
}

template void half_gqa_pack<DType::kBF16>(half_t*, const half_t*, const half_t*, const half_t*, int64_t, int, int, int);
template void half_gqa_pack<DType::kF16>(half_t*, const half_t*, const half_t*, const half_t*, int64_t, int, int, int);
template void half_gqa_unpack<DType::kBF16>(half_t*, half_t*, half_t*, const half_t*, int64_t, int, int, int);
template void half_gqa_unpack<DType::kF16>(half_t*, half_t*, half_t*, const half_t*, int64_t, int, int, int);

}  // namespace zt
