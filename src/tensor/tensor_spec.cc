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

}  // namespace zt
