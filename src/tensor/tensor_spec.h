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
  // Tensor parallelism: this is one slice of a global tensor of global_shape, cut along
  // dimension tp_dim into tp_size parts (-1: a whole copy). With tp_groups > 1 the
  // dimension is tp_groups equal blocks (c_attn's Q, K, V) each cut into tp_size parts,
  // and the slice is the concatenation of this rank's part of every block.
  std::vector<int64_t> global_shape;  // empty: same as shape
  int tp_dim = -1;
  int tp_groups = 1;
  // Expert parallelism: the global index of the routed expert this tensor belongs to (-1:
  // not an expert's). A rank holds the experts of its ep rank only; their gradients are
  // reduced, and their checkpoint pieces written, within the expert-data-parallel group.
  int expert = -1;
};

// For a tensor-parallel slice (rank `tp_rank` of `tp_size`): whether element
// `global_index` of the global tensor (row-major) belongs to this slice, and where.
bool tp_local_index(const TensorSpec& spec, int tp_rank, int tp_size, size_t global_index, size_t* local_index);
// The inverse: the global index of element `local_index` of this rank's slice.
size_t tp_global_index(const TensorSpec& spec, int tp_rank, int tp_size, size_t local_index);

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
  bool has_layer(int layer) const;
  // Layer ids present, in arena order.
  std::vector<int> layers() const;
  // The tensor-parallel slice this table describes (rank 0 of 1: whole tensors).
  int tp_rank() const { return tp_rank_; }
  int tp_size() const { return tp_size_; }
  void set_tp(int rank, int size) {
    tp_rank_ = rank;
    tp_size_ = size;
  }
  // The expert-parallel part this table describes: the experts of ep rank `rank` of
  // `size` (rank 0 of 1: every expert).
  int ep_rank() const { return ep_rank_; }
  int ep_size() const { return ep_size_; }
  void set_ep(int rank, int size) {
    ep_rank_ = rank;
    ep_size_ = size;
  }

 private:
  std::vector<TensorSpec> specs_;
  size_t numel_ = 0;
  int tp_rank_ = 0;
  int tp_size_ = 1;
  int ep_rank_ = 0;
  int ep_size_ = 1;
};

}  // namespace zt
