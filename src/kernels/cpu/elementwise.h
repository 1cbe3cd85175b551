// Elementwise CPU kernels that are memory-bound and need no per-ISA build (plain loops the
// compiler vectorises): a row-parallel layer's epilogue, accumulation, the SGD update, and
// the parallel zero/copy behind the backend's arena calls (the bf16 casts: bf16_convert.h).
#pragma once

#include <cstddef>
#include <cstdint>

#include "tensor/dtype.h"
#include "kernels/cpu/bf16_convert.h"
#include "kernels/kernel_args.h"

namespace zt {

// out (N, C) = (residual + partial) + bias, row by row.
void bias_residual(float* out, const float* residual, const float* partial, const float* bias, int64_t N, int C);
// dst += src.
void accumulate(float* dst, const float* src, int64_t n);
// x *= c.
void scale_f32(float* x, float c, int64_t n);
// dst = src (the f32 table's to_f32 / from_f32).
void copy_f32(float* dst, const float* src, int64_t n);
// torch.optim.SGD's update (see SgdArgs).
void sgd_step(float* p, const float* g, float* buf, int64_t n, const SgdArgs& args);
// memset / memcpy, split over threads for large buffers.
void parallel_zero(void* dst, size_t bytes);
void parallel_copy(void* dst, const void* src, size_t bytes);

}  // namespace zt
