// PsLayout: the static arithmetic of a parameter-server job, identical on every rank.
// - Roles: world ranks [0, S) are servers, [S, S + W) workers.
// - Shards: the flat parameter arena cut into S contiguous shards balanced by bytes
//   (zero/partition.h: ceil(numel / S) elements each, the last shorter); server s owns
//   shard s's parameters and optimizer state.
// - Buckets: layers in the order backward completes them (ln_f, blocks last to first,
//   the embeddings, whose tied wte is complete last), grouped into runs of up to
//   bucket_elems (a larger layer is a bucket alone); layers are contiguous in the arena,
//   so a bucket is one range. A push message is one bucket's slice of one server's shard;
//   a reply sends the shard back in the same slices, in forward order.
// - Message tags (ps_messages.h) identify the kind, and for pushes the bucket.
// Thread-safety: immutable after construction.
#pragma once

#include <vector>

#include "parallel/zero/partition.h"
#include "tensor/tensor_spec.h"

namespace zt {

struct PsBucket {
  ElementRange range;
  std::vector<int> layers;  // in completion order
};

class PsLayout {
 public:
  // n_layer: the model's blocks (layers are kEmbeddingLayer, 0..n_layer-1, n_layer).
  PsLayout(const ParamTable& table, int n_layer, int servers, int workers, size_t bucket_elems);

  int servers() const { return servers_; }
  int workers() const { return workers_; }
  int world() const { return servers_ + workers_; }
  bool is_server(int world_rank) const { return world_rank < servers_; }
  int worker_index(int world_rank) const { return world_rank - servers_; }
  int worker_rank(int worker) const { return servers_ + worker; }

  size_t numel() const { return partition_.numel(); }
  const Partition& partition() const { return partition_; }
  ElementRange shard(int server) const { return partition_.shard(server); }

  const std::vector<PsBucket>& buckets() const { return buckets_; }
  int bucket_of_layer(int layer) const { return bucket_of_layer_[static_cast<size_t>(layer + 1)]; }
  ElementRange layer_range(int layer) const { return layer_range_[static_cast<size_t>(layer + 1)]; }
  int n_layer() const { return n_layer_; }
  // The part of bucket b in server s's shard ({x, x} when none).
  ElementRange slice(int bucket, int server) const;
  // The servers whose shards intersect `range` (non-empty): [*first, *last].
  void servers_of(ElementRange range, int* first, int* last) const;
  // Server s's shard cut at bucket boundaries, in arena (forward) order: the units in
  // which a server updates its shard and sends it back, so that a worker's forward can
  // start on the first parts while the later ones are still being updated.
  const std::vector<ElementRange>& reply_slices(int server) const {
    return reply_slices_[static_cast<size_t>(server)];
  }

 private:
  int servers_, workers_, n_layer_;
  Partition partition_;
  std::vector<PsBucket> buckets_;
  std::vector<int> bucket_of_layer_;        // by layer + 1
  std::vector<ElementRange> layer_range_;  // by layer + 1
  std::vector<std::vector<ElementRange>> reply_slices_;  // by server
};

}  // namespace zt
