// TensorSpec and ParamTable: the one description of a model's flat parameter space.
//
// Parameters live in one arena in a fixed global order; gradients, fp32 master weights
// and optimizer moments mirror it element for element. A TensorSpec names a tensor
// (HuggingFace GPT-2 names without the "transformer." prefix), gives its shape in
// zerotrain's layout, its offset in the arena, whether AdamW decays it, and which layer
// owns it. ZeRO partitions, gradient buckets and checkpoint shards are all offset
// arithmetic over this table.
// Thread-safety: immutable after construction; safe to share.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace zt {

// Layer ids: kEmbeddingLayer for wte/wpe, 0..n_layer-1 for blocks, n_layer for the final norm.
constexpr int kEmbeddingLayer = -1;

enum class InitKind { kZeros, kOnes, kNormal };

struct TensorSpec {
  std::string name;            // e.g. "h.3.attn.c_attn.weight"
  std::vector<int64_t> shape;  // zerotrain layout; Linear weights are (out, in)
  size_t offset = 0;           // first element in the flat arena
  size_t numel = 0;
  bool weight_decay = false;   // AdamW decays this tensor (2-D weights)
  int layer = kEmbeddingLayer;
  InitKind init = InitKind::kZeros;
  float init_std = 0.0f;       // for kNormal
  int64_t init_rows = -1;      // kNormal fills only the first init_rows rows (vocab padding stays 0); -1 = all
};

// A contiguous [begin, end) range of the arena, in elements.
struct ElementRange {
  size_t begin = 0;
  size_t end = 0;
  size_t size() const { return end - begin; }
};

class ParamTable {
 public:
  // Appends a tensor after the previous one (no gaps: the arena is exactly numel() long).
  void add(TensorSpec spec);

  const std::vector<TensorSpec>& specs() const { return specs_; }
  size_t numel() const { return numel_; }
  // Index of the tensor with this name, or -1.
  int find(const std::string& name) const;
  const TensorSpec& at(int index) const { return specs_.at(static_cast<size_t>(index)); }
  // The arena range holding every tensor of `layer` (layers are contiguous by construction).
  ElementRange layer_range(int layer) const;

 private:
  std::vector<TensorSpec> specs_;
  size_t numel_ = 0;
};

}  // namespace zt
