// Helpers of the parameter table (gpt_params.cc):
// building a TensorSpec, its tensor-parallel slice, and finding a named tensor inside a bound layer's buffer.
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "core/check.h"
#include "nn/gpt_layout.h"
#include "tensor/tensor_spec.h"

namespace zt {

// A parameter; 2-D and larger tensors are weight-decayed (AdamW's convention here).
inline TensorSpec param_spec(std::string name, std::vector<int64_t> shape, int layer, InitKind init,
                             float std = 0.0f) {
  TensorSpec s;
  s.name = std::move(name);
  s.weight_decay = shape.size() >= 2;
  s.shape = std::move(shape);
  s.layer = layer;
  s.init = init;
  s.init_std = std;
  return s;
}

// A tensor-parallel slice of `s` along dim (groups: blocks sliced separately, GPT-2's fused
// Q/K/V), or s itself when tp = 1.
inline TensorSpec tp_slice(TensorSpec s, const GptLayout& lay, int dim, int groups = 1) {
  if (lay.tp_size == 1) return s;
  s.global_shape = s.shape;
  s.tp_dim = dim;
  s.tp_groups = groups;
  s.shape[static_cast<size_t>(dim)] /= lay.tp_size;
  return s;
}

// Where tensor `name` of `layer` lies in a buffer holding that layer's range
// (layer_base = the range begin), or null when layer_base is null. The name must exist.
template <typename W>
W* param_in_layer(const ParamTable& table, int layer, W* layer_base, const std::string& name) {
  const int i = table.find(name);
  ZT_CHECK(i >= 0, "parameter %s missing from table", name.c_str());
  return layer_base == nullptr ? nullptr : layer_base + (table.at(i).offset - table.layer_range(layer).begin);
}

}  // namespace zt
