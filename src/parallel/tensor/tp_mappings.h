// Megatron-LM's tensor-parallel communication as explicit forward/backward pairs
// (megatron/core/tensor_parallel/mappings.py). With a group of one, every op is the
// identity.
//   copy_to_tp:     forward identity (the input is replicated on every tp rank),
//                   backward all-reduce (each rank holds a partial input gradient).
//   reduce_from_tp: forward all-reduce (row-parallel partial outputs), backward identity.
//   scatter_to_tp:  forward keep this rank's slice of the last dimension,
//                   backward all-gather it.
//   gather_from_tp: forward all-gather slices of the last dimension, backward keep the slice.
// A column-parallel linear (Y = X A, A = [A_1 .. A_p] split by output columns) is
// copy_to_tp then a local GEMM; a row-parallel linear (A split by input rows) is a local
// GEMM then reduce_from_tp.
#pragma once

#include <cstddef>

#include "comm/process_group.h"
#include "core/status.h"

namespace zt {

inline void copy_to_tp_forward() {}
// grad: (n) the input gradient, summed over tp ranks in place.
Status copy_to_tp_backward(ProcessGroup* tp, float* grad, size_t n);

// x: (n) partial outputs, summed over tp ranks in place.
Status reduce_from_tp_forward(ProcessGroup* tp, float* x, size_t n);
inline void reduce_from_tp_backward() {}

// full (rows, cols) -> slice (rows, cols / tp) of this rank; the backward all-gathers.
void scatter_to_tp_forward(ProcessGroup* tp, float* slice, const float* full, size_t rows, size_t cols);
Status scatter_to_tp_backward(ProcessGroup* tp, float* dfull, const float* dslice, size_t rows, size_t cols);

// slice (rows, cols / tp) -> full (rows, cols) on every rank; the backward keeps the slice.
Status gather_from_tp_forward(ProcessGroup* tp, float* full, const float* slice, size_t rows, size_t cols);
void gather_from_tp_backward(ProcessGroup* tp, float* dslice, const float* dfull, size_t rows, size_t cols);

}  // namespace zt
