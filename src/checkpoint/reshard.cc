// Piece -> global tensor -> slice; see reshard.h.
#include "checkpoint/reshard.h"

#include <cstring>

#include "checkpoint/safetensors.h"

namespace zt {

namespace {

TensorSpec saved_spec(const ManifestTensor& t) {
  TensorSpec s;
  s.name = t.name;
  s.shape = t.shape;
  s.global_shape = t.shape;
  s.tp_dim = t.tp_dim;
  s.tp_groups = t.tp_groups;
  return s;
}

const std::vector<int64_t>& global_shape(const TensorSpec& s) { return s.global_shape.empty() ? s.shape : s.global_shape; }

size_t row_elems(const std::vector<int64_t>& shape) {
  size_t n = 1;
  for (size_t i = 1; i < shape.size(); ++i) n *= static_cast<size_t>(shape[i]);
  return n;
}

}  // namespace

Status check_reshardable(const TensorSpec& spec, const ManifestTensor& saved, const std::string& label) {
  const std::vector<int64_t>& want = global_shape(spec);
  const int64_t logical = saved.logical_rows >= 0 ? saved.logical_rows : saved.shape[0];
  bool ok = want.size() == saved.shape.size() && want[0] >= logical;
  for (size_t i = 1; ok && i < want.size(); ++i) ok = want[i] == saved.shape[i];
  if (ok && want[0] != saved.shape[0]) ok = saved.logical_rows >= 0 || spec.init_rows >= 0;  // padding only
  if (!ok) {
    return Status::InvalidArgument(label + ": tensor " + spec.name + " is " + shape_to_string(saved.shape) +
                                   " in the checkpoint but " + shape_to_string(want) + " in this model");
  }
  return Status::OK();
}

void scatter_piece(const ManifestTensor& saved, const ManifestPiece& p, const float* data, float* global) {
  if (p.tp_size == 1) {
    std::memcpy(global + p.begin, data, (p.end - p.begin) * sizeof(float));
    return;
  }
  const TensorSpec s = saved_spec(saved);
  for (uint64_t k = p.begin; k < p.end; ++k) global[tp_global_index(s, p.tp_rank, p.tp_size, k)] = data[k - p.begin];
}

void read_slice(const TensorSpec& spec, int tp_rank, int tp_size, const ManifestTensor& saved, const float* global,
                size_t begin, size_t end, float* out) {
  const std::vector<int64_t>& want = global_shape(spec);
  const bool whole = spec.tp_dim < 0 || tp_size == 1;
  if (whole && want[0] == saved.shape[0]) {
    std::memcpy(out, global + begin, (end - begin) * sizeof(float));
    return;
  }
  // Rows the saved tensor holds data for; past them is padding (zero).
  const size_t cols = row_elems(want);
  const size_t rows = static_cast<size_t>(saved.logical_rows >= 0 ? saved.logical_rows : saved.shape[0]);
  const size_t limit = std::min(rows, static_cast<size_t>(saved.shape[0])) * cols;
  for (size_t k = begin; k < end; ++k) {
    const size_t g = whole ? k : tp_global_index(spec, tp_rank, tp_size, k);
    out[k - begin] = g < limit ? global[g] : 0.0f;
  }
}

}  // namespace zt
