// Llama's grouped-query heads around attention (ActivationOps::gqa_pack / gqa_unpack):
// the attention kernels take (B, T, 3C) rows with as many k and v heads as query heads,
// so each of the NKV kv heads is repeated rep = NH / NKV times (query head h reads kv head
// h / rep), and the backward sums each kv head's rep gradients in fp32, in copy order,
// rounding once. Rows are independent.
// Thread-safety: pure functions; each parallelises over rows with OpenMP.
#pragma once

#include <cstdint>

#include "tensor/dtype.h"

namespace zt {

// qkv (BT, 3 NH HD) = [q (BT, NH HD) | k, v (BT, NKV HD) with heads repeated].
void gqa_pack(float* qkv, const float* q, const float* k, const float* v, int64_t BT, int NH, int NKV, int HD);
// dq (BT, NH HD) = dqkv's q part; dk, dv (BT, NKV HD) = the sums of the repeated heads.
void gqa_unpack(float* dq, float* dk, float* dv, const float* dqkv, int64_t BT, int NH, int NKV, int HD);

// The 16-bit forms for compute dtype D (bf16 or f16): the same copies, and the sums of
// widened values rounded once.
template <DType D>
void half_gqa_pack(half_t* qkv, const half_t* q, const half_t* k, const half_t* v, int64_t BT, int NH, int NKV, int HD);
template <DType D>
void half_gqa_unpack(half_t* dq, half_t* dk, half_t* dv, const half_t* dqkv, int64_t BT, int NH, int NKV, int HD);

}  // namespace zt
