// Megatron-LM's tensor-parallel communication as explicit forward/backward pairs
// (megatron/core/tensor_parallel/mappings.py). With a group of one, every op is the
// identity.
//   copy_to_tp:     forward identity (the input is replicated on every tp rank),
//                   backward all-reduce (each rank holds a partial input gradient).
//   reduce_from_tp: forward all-reduce (row-parallel partial outputs), backward identity.
// A column-parallel linear (Y = X A, A = [A_1 .. A_p] split by output columns) is
// copy_to_tp then a local GEMM; a row-parallel linear (A split by input rows) is a local
// GEMM then reduce_from_tp. (Megatron's scatter_to / gather_from pair is not needed by
// GPT-2's layers: the vocabulary-parallel head keeps its logits split, vocab_parallel.h.)
#pragma once

#include <cstddef>
#include <vector>

#include "comm/element_gather.h"
#include "comm/process_group.h"
#include "core/status.h"

namespace zt {

inline void copy_to_tp_forward() {}
// grad: (n) the input gradient, summed over tp ranks in place.
Status copy_to_tp_backward(ProcessGroup* tp, float* grad, size_t n);

// data: (P parts of n elements of T: float or half_t) all-gathered over tp
// (comm/element_gather.h; REQUIRES: n even for half_t).
template <typename T>
Status all_gather_tp(ProcessGroup* tp, T* data, size_t n) {
  return all_gather_elements(tp, data, std::vector<size_t>(static_cast<size_t>(tp->size()), n), sizeof(T))->wait();
}

// x: (n) partial outputs, summed over tp ranks in place.
Status reduce_from_tp_forward(ProcessGroup* tp, float* x, size_t n);
inline void reduce_from_tp_backward() {}

}  // namespace zt
