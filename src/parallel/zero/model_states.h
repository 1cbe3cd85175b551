// ModelStates: the one owner of a rank's model states under ZeRO: the parameters (full,
// or this rank's shard and the ZeRO-3 fetcher that gathers layers from it), the
// gradients (full, or the shard), and which range of them the optimizer updates. The
// engine asks it for layer parameters, the owned ranges and the end-of-step exchange,
// and never infers the stage from which buffers exist. Mixed precision and offload
// (issues 13, 14) are to be variations of this class, not branches in the engine.
//
// Stage by stage (shards from Partition, thresholds from partition.h):
//   0: full parameters, full gradients, the optimizer owns everything;
//   1: the optimizer owns the shard; after its step the parameters are all-gathered;
//   2: + gradients are kept as the shard (GradReducer reduce-scatters into it);
//   3: + parameters are kept as the shard; each layer is gathered before use.
//
// Mixed precision (the backend computes in bf16 or f16): the parameters the model reads
// are a 16-bit compute copy (full for stages 0-2, the shard for stage 3); the optimizer
// updates an fp32 master of its owned range, which is cast (round to nearest even) into
// the compute copy after every step and after a load; stages 1-2 then all-gather the
// compute copy (half the bytes of fp32). Gradients stay fp32 (grad_accum_dtype fp32).
// Stage 3 keeps a 16-bit shard and gathers 16-bit layers (half the bytes). Checkpoints
// save the master.
// Thread-safety: one thread drives it (the training loop).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "backend/backend.h"
#include "comm/process_group.h"
#include "core/status.h"
#include "nn/gpt_model.h"
#include "parallel/zero/param_fetcher.h"
#include "parallel/zero/partition.h"

namespace zt {

struct ModelStatesOptions {
  ZeroStage stage = ZeroStage::kNone;
  size_t allgather_bucket_elems = 500'000'000;  // stages 1-2: parameter all-gather bucket
  ParamFetcherOptions fetch;                    // stage 3
  uint64_t seed = 1234;                         // parameter initialisation
  const Backend* backend = nullptr;             // null = cpu_backend()
};

// One named array of this rank's state for checkpoints: data holds `range` of the
// global index space.
struct OwnedArray {
  const char* name;
  float* data;
  ElementRange range;
};

class ModelStates {
 public:
  // The stage refused with a pipeline (one place): stages 2-3 would re-partition gradients
  // and parameters for every micro-batch of the schedule; DeepSpeed refuses it too.
  static Status validate(ZeroStage stage, int pipeline_stages);

  // Allocates and initialises the states for `table` partitioned over dp.
  static StatusOr<std::unique_ptr<ModelStates>> create(const ParamTable& table, const Partition& partition,
                                                       ProcessGroup* dp, int n_layer, const ModelStatesOptions& o);
  ModelStates(const ModelStates&) = delete;
  ModelStates& operator=(const ModelStates&) = delete;

  ZeroStage stage() const { return options_.stage; }
  // The range the optimizer updates (and whose gradients this rank owns after reduction).
  ElementRange owned_range() const { return owned_; }
  // The fp32 parameters the optimizer updates (the master in mixed precision).
  float* owned_params();
  const float* owned_grads() const;
  // The full gradient arena (stages 0-1), null otherwise; the gradient shard (stages 2-3), null otherwise.
  float* full_grads() { return grads_.empty() ? nullptr : grads_.data(); }
  float* grad_shard() { return grad_shard_.empty() ? nullptr : grad_shard_.data(); }
  // The full parameter and gradient arenas as arenas (empty where sharded), for tests and
  // drivers; in mixed precision the parameters are the 16-bit compute copy.
  Arena& full_params_arena() { return params_; }
  bool mixed() const { return compute_ != DType::kF32; }
  Arena& full_grads_arena() { return grads_; }
  // True when parameters are sharded and layers are gathered before use (stage 3).
  bool gathers_layers() const { return fetcher_ != nullptr; }

  // Binds the whole model when parameters are not sharded (stage 3 binds layer by layer).
  void bind(GptModel* model);
  // A micro-batch's layer sequence starts (stage 3: the fetch order).
  void begin_micro(bool with_backward);
  // Where `layer`'s parameters are for the next model call, and giving them back.
  StatusOr<void*> layer_params(int layer, const ParamTable& table);
  void release(int layer);

  void zero_grads();
  // After the optimizer step: stages 1-2 all-gather the parameters, stage 3 refreshes its
  // persistent layers. Collective over dp.
  Status finish_step();
  // After a checkpoint load wrote the owned parameters (collective under stage 3).
  Status finish_load();
  // Every parameter into out (table.numel() floats; the fp32 master in mixed precision).
  // Collective when sharded.
  Status gather_params(float* out);
  // The fp32 parameters this rank holds (the master in mixed precision), named "param",
  // for checkpoint views.
  OwnedArray param_array();

  // Parameters the model reads plus, in mixed precision, the fp32 master.
  size_t param_bytes() const { return params_.bytes() + param_shard_.bytes() + master_.bytes(); }
  size_t master_bytes() const { return master_.bytes(); }
  size_t grad_bytes() const { return grads_.bytes() + grad_shard_.bytes(); }
  size_t fetch_buffer_bytes() const { return fetcher_ ? fetcher_->buffer_bytes() : 0; }

 private:
  ModelStates(const Partition& partition, ProcessGroup* dp, const ModelStatesOptions& o);
  Status allocate(const ParamTable& table, int n_layer);
  const Backend& backend() const { return backend_or_cpu(options_.backend); }
  // Mixed precision: casts the master into the compute copy's owned range and (stages
  // 1-2) all-gathers the compute copy.
  Status publish_master();

  Partition partition_;
  ProcessGroup* dp_;
  ModelStatesOptions options_;
  ElementRange shard_;  // this rank's shard
  ElementRange owned_;  // the optimizer's range: shard_ or everything
  Arena params_;        // full parameters (stages 0-2)
  Arena param_shard_;   // this rank's parameters (stage 3)
  Arena grads_;         // full gradients (stages 0-1)
  Arena grad_shard_;    // this rank's gradients (stages 2-3)
  DType compute_ = DType::kF32;  // the dtype of params_ / param_shard_
  Arena master_;        // mixed precision: fp32 master of owned_
  std::unique_ptr<ParamFetcher> fetcher_;  // stage 3
};

}  // namespace zt
