// SwappedShard: ZeRO-3 parameter offload's side of the fetcher. This rank's parameter
// shard lives in one array of a SwapArrays (written by the optimizer step); the layer
// parts the ParamFetcher asks for are read from it into `buffer_count` staging buffers,
// ahead of use in the fetch order (forward, then backward), and checksum-verified.
// The first max_in_cpu elements of the shard are also kept in memory (written through by
// the step) and served from there. DeepSpeed's offload_param: buffer_count, buffer_size,
// max_in_cpu.
// Invariants: a part returned by part() stays valid until the next part() call; no read
// is in flight across an optimizer step (invalidate() before the step rewrites the file).
// Thread-safety: the training thread only.
#pragma once

#include <memory>
#include <vector>

#include "io/swap_arrays.h"
#include "parallel/zero/param_fetcher.h"

namespace zt {

class SwappedShard final : public ShardSource {
 public:
  // max_part: the largest part that will be asked for (elements).
  static StatusOr<std::unique_ptr<SwappedShard>> create(SwapArrays* swap, size_t array, const void* cache,
                                                        size_t cache_elems, int buffer_count, size_t max_part,
                                                        bool pin);
  StatusOr<const void*> part(size_t begin, size_t end) override;
  void prefetch(size_t begin, size_t end) override;
  int prefetch_depth() const override { return static_cast<int>(stages_.size()) - 1; }
  // Parts are read into host buffers, and the cache is host memory too wherever the
  // backend's is not (ModelStates::params_on_host).
  bool host() const override { return true; }
  // The bytes of one staging buffer for parts of up to max_part elements.
  static size_t stage_bytes(size_t max_part, size_t elem_bytes);
  // Waits for and drops every read in flight (before the file is rewritten).
  void invalidate();
  size_t buffer_bytes() const;

 private:
  struct Stage {
    IoBuffer buf;
    enum { kFree, kReading, kHanded } state = kFree;
    size_t begin = 0, end = 0;
    SwapArrays::RangeRead read;
  };
  SwappedShard(SwapArrays* swap, size_t array, const unsigned char* cache, size_t cache_elems)
      : swap_(swap), array_(array), cache_(cache), cache_elems_(cache_elems) {}
  Stage* find(size_t begin, size_t end);
  Stage* free_stage();
  void start(Stage* s, size_t begin, size_t end);

  SwapArrays* swap_;
  size_t array_;
  const unsigned char* cache_;
  size_t cache_elems_;
  std::vector<Stage> stages_;
};

}  // namespace zt
