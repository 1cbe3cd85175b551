// GradReducer: turns each rank's local gradients into the data-parallel sum, in buckets
// launched as soon as backward has produced them (overlap_comm), in an order fixed by
// the layer list so every rank issues the same collectives.
//
// Units are the layers of the rank's parameter table in reverse arena order, which is the
// order backward completes them (the LM head's wte and ln_f, blocks from last to first,
// then the embeddings, whose tied wte is complete only after the embedding backward);
// a bucket is a run of consecutive units
// up to reduce_bucket_size elements (a larger unit is a bucket alone), so each bucket is
// one contiguous range of the flat arena. By ZeRO stage (thresholds, partition.h):
//   stage 0: gradients live in a full arena; on the last micro-batch each bucket is
//            all-reduced in place (earlier micro-batches accumulate locally).
//   stage 1: the same arena; on the last micro-batch each bucket is reduce-scattered, so
//            every rank ends with the sum of its own shard.
//   stage 2+: no full arena. Each bucket is filled in a pooled buffer, reduce-scattered
//            on every micro-batch, the rank's part added into its gradient shard, and the
//            buffer reused: gradient memory is the shard plus a few buckets.
// Gradients are summed, not averaged: the loss is normalised by the global token count.
// Expert parallelism (stage 0): a routed expert's tensors (TensorSpec::expert) differ
// between the ranks of an expert-parallel group, so a bucket's runs of them are
// all-reduced over the expert-data-parallel group (the ranks holding the same experts)
// and the rest over dp, as DeepSpeed does. Stages 1+: ZeRO partitions every tensor over the
// expert-data-parallel group (`dp` here), and after a bucket's reduce-scatter the non-expert
// runs of this rank's segment are all-reduced over the expert-parallel group (dense_ep),
// which completes their sum over all dp ranks.
// 16-bit reduction (options.wire, grad_wire.h): a bucket is rounded into a pooled 16-bit buffer
// when it launches, reduced in 16 bits, and the rank's reduced part widened back at retire.
// ZeRO++ qgZ (options.quantized_gradients, stage 3, parallel/zero/quantized_reduce.h): a
// bucket's reduce-scatter is int4 all-to-alls, in two levels when options.node (the hpZ
// group) is given; its encoded buffers live in the work until retire.
// Thread-safety: used by the training thread only.
#pragma once

#include <cstddef>
#include <deque>
#include <memory>
#include <vector>

#include "comm/process_group.h"
#include "nn/layer_walk.h"
#include "parallel/data/grad_wire.h"
#include "parallel/zero/partition.h"
#include "parallel/zero/quantized_reduce.h"
#include "backend/backend.h"
#include "tensor/tensor_spec.h"

namespace zt {

struct GradReducerOptions {
  ZeroStage stage = ZeroStage::kNone;
  size_t bucket_elems = 500'000'000;  // reduce_bucket_size
  bool overlap = true;  // overlap_comm: a full bucket's reduction runs while backward goes on;
                        // off: it runs to completion before backward continues
  const Backend* backend = nullptr;  // allocates, zeroes and accumulates the buckets; null = cpu_backend()
  ProcessGroup* expert_dp = nullptr;  // expert parallelism (stage 0): the routed experts' group; null: dp
  ProcessGroup* dense_ep = nullptr;   // expert parallelism (stages 1+): the non-expert segments' last sum
  // communication_data_type: kF32, or kBF16 / kF16 to reduce in 16 bits (grad_wire.h; not with
  // expert parallelism).
  CommDType wire = CommDType::kF32;
  // zero_quantized_gradients: ZeRO++ qgZ (stage 3 only, fp32 wire, no expert parallelism);
  // node: the hpZ group for its two levels (null: one level over dp).
  bool quantized_gradients = false;
  ProcessGroup* node = nullptr;
};

// The layer walk (nn/layer_walk.h) hands it each layer's gradients as backward finishes them.
class GradReducer final : public LayerGradSink {
 public:
  // full_grads: the full gradient arena (stage < 2), else null; grad_shard: the rank's
  // gradient shard (stage >= 2), else null.
  GradReducer(const ParamTable& table, const Partition& partition, ProcessGroup* dp, const GradReducerOptions& options,
              float* full_grads, float* grad_shard);
  // The units in completion order (for callers that report them all at once).
  const std::vector<int>& completion_order() const { return order_; }

  // Starts a micro-batch; `last` is the last one of the optimizer step.
  void begin_micro(bool last) override;
  // Stage 0: false keeps this step's gradients local (the 1-bit optimizers reduce their
  // momentum themselves after the warm-up; optim/optimizer.h engine_reduces_gradients).
  void set_reduce(bool on) { reduce_ = on; }
  // Where `layer`'s gradients go for this micro-batch (pointer to the element of the
  // layer's range begin). Stage 2+: opens (zeroes) the layer's bucket buffer if needed.
  float* acquire_layer(int layer) override;
  // `layer`'s gradient for this micro-batch is complete; may launch its bucket.
  void layer_done(int layer) override;
  // Launches what is left, waits for every reduction of the micro-batch and (stage 2+)
  // adds each rank's part into its shard. Returns the first failure of the micro-batch.
  Status end_micro() override;

  int num_buckets() const { return static_cast<int>(buckets_.size()); }
  size_t bucket_bytes() const;  // peak bytes of bucket buffers (stage 2+)

  // The layers of each bucket, in backward completion order: consecutive layers while
  // they fit in bucket_elems (a larger layer gets a bucket of its own).
  static std::vector<std::vector<int>> bucket_layers(const ParamTable& table, size_t bucket_elems);
  // Each such bucket's arena range (its layers are adjacent; the first of them holds the end).
  static std::vector<ElementRange> bucket_ranges(const ParamTable& table, const std::vector<std::vector<int>>& groups);
  // What bucket_bytes() can reach at most (stage 2+): buffers pooled per bucket size.
  static size_t max_buffer_bytes(const ParamTable& table, size_t bucket_elems);
  // The same for the 16-bit buffers of options.wire (every stage).
  static size_t max_wire_bytes(const ParamTable& table, size_t bucket_elems) {
    return max_buffer_bytes(table, bucket_elems) / 2;
  }
  // The same for qgZ's encoded buffers on dp rank `dp_rank` with node groups of node_size.
  static size_t max_qgz_bytes(const ParamTable& table, size_t bucket_elems, const Partition& partition, int dp_rank,
                              int node_size);

 private:
  const Backend& backend() const { return backend_or_cpu(options_.backend); }
  struct Bucket {
    ElementRange range;
    std::vector<int> layers;   // units, in completion order
    int pending = 0;           // units not yet done in this micro-batch
    float* buffer = nullptr;   // stage 2+: pooled buffer holding `range`
    uint16_t* wire = nullptr;  // 16-bit reduction: pooled buffer holding `range` as sent
    std::vector<WorkHandle> work;
    bool launched = false;
    std::vector<std::pair<ElementRange, bool>> runs;  // expert parallelism: (range, routed experts'?)
    std::unique_ptr<QgzReduceScatter> qgz;            // ZeRO++ qgZ: the bucket's quantized reduce-scatter
  };
  void launch(Bucket& b);
  Status retire(Bucket& b);          // wait, accumulate (stage 2+), release the buffer
  Status sum_dense_over_ep(const Bucket& b);  // expert parallelism, stages 1+: after the reduce-scatter
  template <class T>
  T* take(BucketPool<T>& pool, size_t elems, DType dtype, const char* what);
  float* take_buffer(size_t elems);
  void launch_16(Bucket& b, const float* src);
  void widen_reduced(Bucket& b);
  void note(const Status& s) {
    if (error_.ok() && !s.ok()) error_ = s;
  }

  const Partition& partition_;
  ProcessGroup* dp_;
  GradReducerOptions options_;
  float* full_grads_;
  float* grad_shard_;
  std::vector<Bucket> buckets_;
  std::vector<int> order_;             // units in completion order
  std::vector<int> bucket_of_layer_;  // indexed by layer + 1
  std::vector<ElementRange> layer_range_;  // indexed by layer + 1
  std::deque<Bucket*> in_flight_;
  bool last_micro_ = false;
  bool reduce_ = true;
  GradWire wire_;
  BucketPool<float> buffers_;  // stage 2+: the fp32 bucket buffers
  size_t qgz_live_ = 0, qgz_peak_ = 0;  // qgZ: encoded bytes of the buckets in flight, and their peak
  Status error_;  // first failed reduction of the micro-batch, reported by end_micro()
};

}  // namespace zt
