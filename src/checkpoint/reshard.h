// Resharding on global offsets: a tensor's saved pieces (any tp slicing, any ZeRO
// cut) assemble into the global tensor, and any other layout's slice is read out of it.
// With tensor parallelism, element k of slice r maps to a global element through
// tp_global_index (tensor/tensor_spec.h), for the saving layout and the loading one
// alike. The vocabulary padding of wte may differ between layouts (it is rounded to the
// tp size): rows past the logical rows are padding, zero in every state.
#pragma once

#include <cstddef>
#include <string>

#include "checkpoint/manifest.h"
#include "core/status.h"
#include "tensor/tensor_spec.h"

namespace zt {

// OK if this rank's `spec` can be read from the saved tensor: the same global shape,
// except for vocabulary padding rows. Errors name the tensor and both shapes.
Status check_reshardable(const TensorSpec& spec, const ManifestTensor& saved, const std::string& label);

// Writes piece `p` (its end - begin floats at `data`) into the saved global tensor.
void scatter_piece(const ManifestTensor& saved, const ManifestPiece& p, const float* data, float* global);

// Elements [begin, end) of the tp slice (tp_rank of tp_size) that `spec` describes,
// read from the saved global tensor, into out.
void read_slice(const TensorSpec& spec, int tp_rank, int tp_size, const ManifestTensor& saved, const float* global,
                size_t begin, size_t end, float* out);

}  // namespace zt
