// zerotrain's optimizer CUDA kernels: AdamW, SGD and LAMB's two passes, and the sum of
// squares behind the gradient norm. The updates are the CPU kernels' arithmetic
// operation for operation (kernels/cpu/impl/adamw_impl.h, lamb_impl.h, elementwise.cc),
// so parameters and moments are bit-identical to the CPU's on the same inputs, step
// after step. The sums are deterministic and follow a CPU ISA's order exactly:
// - lamb_moments: LAMB's sum p^2 and sum u^2 as the CPU forms them on every ISA (each
//   square exact in double, element i of a 16 Ki chunk into accumulator i % 8, a fixed
//   tree, chunks in order), so LAMB's trust ratio is bit-identical too;
// - sum_squares: the chunked float sums of the CPU's kernel for a chosen ISA layout
//   (SumSquaresOrder), added in chunk order in double.
// Pointers are device memory; scalars that a step computes (LAMB's sums, the sum of
// squares) are written to device memory, never returned to the host. One or more
// launches on `stream`; nothing synchronises.
// Thread-safety: as elementwise.h.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels/cuda/cpu_order.h"
#include "kernels/kernel_args.h"

namespace zt::cuda {

void adamw_step(float* p, const float* g, float* m, float* v, int64_t n, const AdamWArgs& args, cudaStream_t stream);
void sgd_step(float* p, const float* g, float* buf, int64_t n, const SgdArgs& args, cudaStream_t stream);

// Doubles of device workspace lamb_moments needs for n elements.
int64_t lamb_workspace_doubles(int64_t n);
// m, v updated; sums (device) += (sum p^2 before the update, sum u^2). workspace: device,
// lamb_workspace_doubles(n) doubles.
void lamb_moments(const float* p, const float* g, float* m, float* v, int64_t n, const LambArgs& args, LambSums* sums,
                  double* workspace, cudaStream_t stream);
// p += lamb_neg_step(*sums, args) * u; sums: device memory, as lamb_moments left them.
void lamb_apply(float* p, const float* m, const float* v, int64_t n, const LambArgs& args, const LambSums* sums,
                cudaStream_t stream);

// Doubles of device workspace sum_squares needs for n elements.
int64_t sum_squares_workspace_doubles(int64_t n);
// *out (device) = sum x^2 (accumulate: *out += it): float partial sums over fixed 64 Ki
// chunks in `order`'s lane layout, the chunks added in chunk order in double.
void sum_squares(double* out, const float* x, int64_t n, CpuOrder order, double* workspace,
                 cudaStream_t stream, bool accumulate = false);

}  // namespace zt::cuda
