// ParamTable bookkeeping.
#include "tensor/tensor_spec.h"

#include "core/check.h"

namespace zt {

void ParamTable::add(TensorSpec spec) {
  size_t numel = 1;
  for (int64_t d : spec.shape) {
    ZT_CHECK(d > 0, "tensor %s has a non-positive dimension", spec.name.c_str());
    numel *= static_cast<size_t>(d);
  }
  ZT_CHECK(find(spec.name) < 0, "duplicate tensor name %s", spec.name.c_str());
  if (!specs_.empty()) {
    ZT_CHECK(spec.layer >= specs_.back().layer, "tensor %s breaks layer order", spec.name.c_str());
  }
  spec.numel = numel;
  spec.offset = numel_;
  numel_ += numel;
  specs_.push_back(std::move(spec));
}

int ParamTable::find(const std::string& name) const {
  for (size_t i = 0; i < specs_.size(); ++i) {
    if (specs_[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

ElementRange ParamTable::layer_range(int layer) const {
  ElementRange range{numel_, 0};
  for (const TensorSpec& s : specs_) {
    if (s.layer != layer) continue;
    if (s.offset < range.begin) range.begin = s.offset;
    if (s.offset + s.numel > range.end) range.end = s.offset + s.numel;
  }
  ZT_CHECK(range.end > range.begin, "no tensors in layer %d", layer);
  return range;
}

bool ParamTable::has_layer(int layer) const {
  for (const TensorSpec& s : specs_) {
    if (s.layer == layer) return true;
  }
  return false;
}

std::vector<int> ParamTable::layers() const {
  std::vector<int> out;
  for (const TensorSpec& s : specs_) {
    if (out.empty() || out.back() != s.layer) out.push_back(s.layer);
  }
  return out;
}

bool tp_local_index(const TensorSpec& s, int tp_rank, int tp_size, size_t g, size_t* local) {
  if (s.tp_dim < 0 || tp_size == 1) {
    *local = g;
    return true;
  }
  const std::vector<int64_t>& gs = s.global_shape.empty() ? s.shape : s.global_shape;
  const size_t cols = gs.size() >= 2 ? static_cast<size_t>(gs[1]) : 1;
  const size_t row = g / cols, col = g % cols;
  const size_t P = static_cast<size_t>(tp_size), r = static_cast<size_t>(tp_rank);
  if (s.tp_dim == 0) {
    const size_t group_rows = static_cast<size_t>(gs[0]) / static_cast<size_t>(s.tp_groups);
    const size_t part = group_rows / P, group = row / group_rows, within = row % group_rows;
    if (within / part != r) return false;
    *local = (group * part + within % part) * cols + col;
    return true;
  }
  const size_t part = cols / P;
  if (col / part != r) return false;
  *local = row * part + col % part;
  return true;
}

size_t tp_global_index(const TensorSpec& s, int tp_rank, int tp_size, size_t k) {
  if (s.tp_dim < 0 || tp_size == 1) return k;
  const std::vector<int64_t>& gs = s.global_shape.empty() ? s.shape : s.global_shape;
  const size_t cols = gs.size() >= 2 ? static_cast<size_t>(gs[1]) : 1;
  const size_t P = static_cast<size_t>(tp_size), r = static_cast<size_t>(tp_rank);
  if (s.tp_dim == 0) {
    const size_t group_rows = static_cast<size_t>(gs[0]) / static_cast<size_t>(s.tp_groups);
    const size_t part = group_rows / P;
    const size_t local_row = k / cols, col = k % cols;
    const size_t group = local_row / part, within = local_row % part;
    return (group * group_rows + r * part + within) * cols + col;
  }
  const size_t part = cols / P;
  const size_t row = k / part, col = k % part;
  return row * cols + r * part + col;
}

}  // namespace zt
