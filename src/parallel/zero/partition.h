// ZeRO partitioning as offset arithmetic on the flat parameter space (llm.c's ShardInfo).
//
// The Ψ elements are cut into N contiguous shards of S = ceil(Ψ / N) elements (the last
// may be shorter or empty); rank r owns [r*S, min((r+1)*S, Ψ)). With align > 1, S is
// rounded up to a multiple of align (mixed precision uses 2, so a shard of 16-bit values
// starts on a 4-byte boundary and moves as 32-bit words). ZeRO's stages are one
// threshold each: optimizer state is sharded from stage 1, gradients from stage 2,
// parameters from stage 3 (shards_optimizer / shards_gradients / shards_parameters).
// Thread-safety: immutable value.
#pragma once

#include "tensor/dtype.h"

#include <cstddef>
#include <vector>

#include "tensor/tensor_spec.h"

namespace zt {

enum class ZeroStage { kNone = 0, kOptimizer = 1, kGradients = 2, kParameters = 3 };

inline bool shards_optimizer(ZeroStage s) { return s >= ZeroStage::kOptimizer; }
inline bool shards_gradients(ZeroStage s) { return s >= ZeroStage::kGradients; }
inline bool shards_parameters(ZeroStage s) { return s >= ZeroStage::kParameters; }

// Alignment of the ZeRO partition for a compute dtype: 2 for 16-bit compute, else 1.
inline size_t partition_align(DType compute) { return compute == DType::kF32 ? 1 : 2; }

class Partition {
 public:
  Partition(size_t numel, int world, size_t align = 1);

  size_t numel() const { return numel_; }
  int world() const { return world_; }
  size_t shard_size() const { return shard_size_; }
  ElementRange shard(int rank) const;
  // Elements of `range` owned by each rank (the counts of a reduce_scatter/all_gather
  // over that range); they sum to range.size().
  std::vector<size_t> counts(ElementRange range) const;

 private:
  size_t numel_;
  int world_;
  size_t shard_size_;
};

}  // namespace zt
