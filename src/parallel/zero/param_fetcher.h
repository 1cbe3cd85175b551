// ParamFetcher: ZeRO-3's parameter side. Each rank keeps only its shard of the flat
// parameters; a layer's full parameters are all-gathered into a pooled buffer just
// before its forward and again before its backward, and released after.
//
// The fetch order of a micro-batch is static, from the layer list (embeddings, blocks
// 0..L-1, ln_f, embeddings again for the tied LM head — ln_f and the head stay held
// through the head's backward — then blocks L-1..0 for the backward),
// so every rank issues the same all-gathers in the same order; while one layer
// computes, the next ones in that order are prefetched up to stage3_prefetch_bucket_size
// elements. Every fetch slot goes kNotAvailable -> kInFlight -> kAvailable -> released.
// A layer smaller than stage3_param_persistence_threshold elements is kept whole on
// every rank instead (gathered once after each optimizer step): zerotrain fetches whole
// layers in one collective, so the threshold applies to layers, not to single tensors.
// With qwZ the fetched layers travel as int8 blocks (quantized_gather.h); persistent
// layers stay exact, as DeepSpeed keeps persistent parameters whole and unquantized.
// With hpZ (a group of hpz dp ranks, one host's in DeepSpeed's use) each forward gather also
// leaves this rank its 1/hpz slice of the layer (a secondary partition), and the layer's
// backward gather runs within the hpz group from those slices: the same values as the
// forward's (qwZ's dequantized ones included), without crossing hosts. A backward gather
// starts only after its layer's forward gather of the same micro-batch was acquired.
// Thread-safety: used by the training thread only.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "comm/process_group.h"
#include "parallel/zero/partition.h"
#include "backend/backend.h"
#include "tensor/tensor_spec.h"

namespace zt {

enum class ParamState { kNotAvailable, kInFlight, kAvailable };

// Where this rank's parameter shard is read from: memory, or (parameter offload) a
// swap file read ahead of use.
class ShardSource {
 public:
  virtual ~ShardSource() = default;
  // Shard elements [begin, end) (relative to the shard), valid until the next call.
  virtual StatusOr<const void*> part(size_t begin, size_t end) = 0;
  // A hint that part(begin, end) will be asked for soon.
  virtual void prefetch(size_t /*begin*/, size_t /*end*/) {}
  // How many parts ahead prefetch() is worth calling for.
  virtual int prefetch_depth() const { return 0; }
  // True when parts are host memory apart from the fetcher's backend (parameter offload
  // on a device): they go into the gather buffer by copy_from_host.
  virtual bool host() const = 0;
};

struct ParamFetcherOptions {
  size_t prefetch_elems = 50'000'000;       // stage3_prefetch_bucket_size
  size_t persistence_threshold = 100'000;   // stage3_param_persistence_threshold
  const Backend* backend = nullptr;         // allocates and copies the gather buffers; null = cpu_backend()
  DType dtype = DType::kF32;                // of the shard and the gathered layers (16-bit in mixed precision)
  bool quantized_weights = false;           // zero_quantized_weights: ZeRO++ qwZ (quantized_gather.h), host memory
  int hpz_partition_size = 1;               // zero_hpz_partition_size: ZeRO++ hpZ (below)
  bool shard_on_host = false;               // an in-memory shard lives in host memory apart from the backend's
  ProcessGroup* hpz = nullptr;              // hpZ's group of that size (consecutive dp ranks); null when 1
};

class ParamFetcher {
 public:
  // param_shard: this rank's shard of the flat parameters (partition.shard(rank)), in
  // options.dtype, in memory or behind a ShardSource (which must outlive the fetcher).
  ParamFetcher(const ParamTable& table, const Partition& partition, ProcessGroup* dp, const void* param_shard,
               int n_layer, const ParamFetcherOptions& options);
  ParamFetcher(const ParamTable& table, const Partition& partition, ProcessGroup* dp, ShardSource* source,
               int n_layer, const ParamFetcherOptions& options);

  // Starts a micro-batch's fetch sequence: forward only (evaluation) or forward and backward.
  void begin_micro(bool with_backward);
  // The gathered parameters of `layer` (pointer to its range begin), which must be the next
  // non-persistent layer of the sequence; waits for its gather and prefetches ahead.
  StatusOr<void*> acquire(int layer);
  // Returns the buffer of the most recent acquire of `layer` to the pool.
  void release(int layer);
  // Re-gathers the persistent layers from the shards (after each optimizer step).
  Status refresh_persistent();
  bool persistent(int layer) const { return persistent_[static_cast<size_t>(layer + 1)]; }
  // Persistent layers' full parameters (valid after refresh_persistent()).
  void* persistent_params(int layer);

  size_t buffer_bytes() const;  // peak bytes of gather buffers, persistent copies included
  ParamState state_of_next() const;

 private:
  struct Slot {
    int layer;
    ParamState state = ParamState::kNotAvailable;
    void* buffer = nullptr;
    WorkHandle work;
    bool backward = false;  // the layer's fetch for the backward (hpZ gathers it within its group)
  };
  Status start(Slot& slot);
  void* take_buffer(size_t elems);
  // Starts the gather of range r into dst (this rank's part copied in place first),
  // quantized (qwZ) or not.
  StatusOr<WorkHandle> gather(void* dst, ElementRange r, bool quantized);
  // This rank's part of layer range r, relative to the shard (empty when it has none).
  ElementRange own_part(ElementRange r) const;
  void prefetch_shard_parts();
  // hpZ: the layer's secondary partition, this rank's slice of it, and its save and gather.
  Partition secondary_partition(int layer) const;
  void save_secondary(const Slot& slot);
  WorkHandle gather_secondary(const Slot& slot);
  bool startable(const Slot& slot) const;
  size_t elem_bytes() const { return dtype_size(options_.dtype); }
  Arena allocate(size_t elems) const;
  const Backend& backend() const { return backend_or_cpu(options_.backend); }
  void give_back(void* buffer, size_t elems);

  const Partition& partition_;
  ProcessGroup* dp_;
  std::unique_ptr<ShardSource> own_source_;  // the in-memory shard
  ShardSource* source_;
  ParamFetcherOptions options_;
  std::vector<ElementRange> range_;        // indexed by layer + 1
  std::vector<bool> persistent_;           // indexed by layer + 1
  std::vector<Arena> persistent_copy_;
  std::vector<Arena> secondary_;           // hpZ: indexed by layer + 1, this rank's slice
  std::vector<bool> secondary_fresh_;      // saved by this micro-batch's forward gather
  std::vector<Slot> sequence_;
  size_t next_ = 0;     // next slot to acquire
  size_t started_ = 0;  // slots started so far
  std::vector<std::pair<size_t, Arena>> pool_;  // (elements, buffer)
  std::vector<std::pair<size_t, void*>> free_;
  size_t peak_bytes_ = 0;
  size_t live_bytes_ = 0;
};

}  // namespace zt
