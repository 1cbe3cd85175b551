// MoE dispatch and combine (issue 30), the data movement around the experts, forward and
// backward, in fp32 on the host. With the gate's choices (moe_gate.h: expert and location
// per token and slot, -1 where dropped) and C features per token:
//   dispatch: buf (E, cap, C), row (e, loc) = x[t] for each kept (t, slot) routed there,
//             zero where no token landed (DeepSpeed's einsum "sec,sm->ecm");
//   combine:  y[t] = sum over the token's kept slots, in slot order, of weight * out[e][loc]
//             (DeepSpeed's "sec,ecm->sm");
//   and their backward: dx[t] = sum over kept slots of dbuf[e][loc]; dout[e][loc] =
//   weight * dy[t]; dweight[t][j] = <out[e][loc], dy[t]> (in double, in feature order).
// Every kept location is below cap, and an expert's filled rows are its first ones (the
// gate counts locations over kept tokens), so fill[e] rows hold every token of expert e.
// Invariants: sums run in slot order and feature order, whatever the thread count.
// Thread-safety: pure functions; they parallelise over tokens.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/moe_ops.h"

namespace zt {

void moe_dispatch(float* buf, const float* x, const MoeSlots& s, int C);
void moe_dispatch_backward(float* dx, const float* dbuf, const MoeSlots& s, int C);
void moe_combine(float* y, const float* out, const float* weight, const MoeSlots& s, int C);
// dout (E, cap, C) is written (zero where no token landed); dweight (N, k) too (0 where dropped).
void moe_combine_backward(float* dout, float* dweight, const float* dy, const float* out, const float* weight,
                          const MoeSlots& s, int C);

}  // namespace zt
