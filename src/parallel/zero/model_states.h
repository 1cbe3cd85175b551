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
//
// Where the optimizer's arrays live is a StateStore (state_store.h): the fp32 master
// (mixed precision), the optimizer's state and, with parameter offload, the parameter
// shard. Resident, they are arenas; offloaded (DeepSpeed's offload_optimizer /
// offload_param with device "nvme"), they are swap files streamed through a few buffers
// in sub_group_size chunks. update() drives both the same way: per chunk, the
// optimizer's update, then the cast into the compute copy; finish_step() then does the
// exchange above. With parameter offload (stage 3) the fetcher reads layer parts from
// the swap file (SwappedShard).
// Thread-safety: one thread drives it (the training loop).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "comm/process_group.h"
#include "core/status.h"
#include "io/async_io.h"
#include "nn/gpt_model.h"
#include "nn/layer_walk.h"
#include "optim/optimizer.h"
#include "parallel/zero/param_fetcher.h"
#include "parallel/zero/partition.h"
#include "parallel/zero/state_store.h"
#include "parallel/zero/swapped_shard.h"

namespace zt {

// DeepSpeed's offload_optimizer / offload_param "device". kCpu is where a CPU run's states
// already are: nothing to do (the banner says so). On a backend whose memory is not the
// host's (a GPU; the guarded test backend), offload_optimizer "cpu" keeps the fp32 master
// and the optimizer state in host memory and updates them on the host's threads
// (ModelStates::updates_on_host; docs/design/offload.md).
enum class OffloadDevice { kNone, kCpu, kNvme };

// DeepSpeed's zero_optimization.offload_optimizer / offload_param: the devices the config
// asked for. param_device is set at stage 3 only: DeepSpeed reads offload_param there, and
// config/ drops it below with a note (validate_offload refuses it for direct callers).
struct OffloadOptions {
  OffloadDevice optimizer_device = OffloadDevice::kNone;  // offload_optimizer.device
  OffloadDevice param_device = OffloadDevice::kNone;      // offload_param.device
  // What is swapped to NVMe: the optimizer state; the parameter shard.
  bool swaps_optimizer() const { return optimizer_device == OffloadDevice::kNvme; }
  bool swaps_params() const { return param_device == OffloadDevice::kNvme; }
  std::string optimizer_path;      // offload_optimizer.nvme_path
  std::string param_path;          // offload_param.nvme_path
  size_t sub_group_size = 1'000'000'000;  // elements per swapped chunk
  bool pin_memory = true;
  int param_buffer_count = 5;
  size_t param_buffer_size = 100'000'000;  // elements; at least the largest layer part
  size_t max_in_cpu = 1'000'000'000;       // shard elements kept in memory as well
  AioConfig aio;
  int world_rank = 0;              // in the swap file names
};

struct ModelStatesOptions {
  ZeroStage stage = ZeroStage::kNone;
  std::vector<std::string> optimizer_state;     // the optimizer's per-element arrays (state_names())
  OffloadOptions offload;
  static constexpr size_t kAllgatherBucketElems = 500'000'000;  // DeepSpeed's allgather_bucket_size
  size_t allgather_bucket_elems = kAllgatherBucketElems;        // stages 1-2: parameter all-gather bucket
  ParamFetcherOptions fetch;                    // stage 3
  uint64_t seed = 1234;                         // parameter initialisation
  const Backend* backend = nullptr;             // null = cpu_backend()
};

// One named array of this rank's state for checkpoints: data holds `range` of the
// global index space.
struct OwnedArray {
  std::string name;
  float* data;
  ElementRange range;
  bool host = false;  // host memory whatever the backend (the states offload_optimizer "cpu" moved there)
};

// The layer walk (nn/layer_walk.h) reads parameters through it: the full arena, or under
// ZeRO-3 a gathered layer.
class ModelStates final : public LayerParamSource {
 public:
  // The stage refused with a pipeline (one place): stages 2-3 would re-partition gradients
  // and parameters for every micro-batch of the schedule; DeepSpeed refuses it too.
  static Status validate(ZeroStage stage, int pipeline_stages);

  // Allocates and initialises the states for `table` partitioned over dp (collective:
  // create_local, then publish).
  static StatusOr<std::unique_ptr<ModelStates>> create(const ParamTable& table, const Partition& partition,
                                                       ProcessGroup* dp, int n_layer, const ModelStatesOptions& o);
  // The local part (allocation, swap files, initial values): it may fail on one rank
  // only, so callers agree on the outcome before publish(), the collective part
  // (stages 1-2 in mixed precision gather the compute copy; stage 3 its persistent layers).
  static StatusOr<std::unique_ptr<ModelStates>> create_local(const ParamTable& table, const Partition& partition,
                                                             ProcessGroup* dp, int n_layer, const ModelStatesOptions& o);
  Status publish();
  ModelStates(const ModelStates&) = delete;
  ModelStates& operator=(const ModelStates&) = delete;

  ZeroStage stage() const { return options_.stage; }
  // Validates the offload options against the stage (the key at fault named).
  static Status validate_offload(ZeroStage stage, const OffloadOptions& o);
  // True when the optimizer's arrays live in host memory apart from the backend's and the
  // update runs there (offload_optimizer "cpu" or "nvme" on a non-host backend; with
  // "nvme" the store's chunks are read into host buffers): the optimizer is then built on
  // the host backend (plain_cpu_backend), and each step stages the owned gradients to the
  // host and the updated compute copy back, in pieces.
  static bool updates_on_host(const Backend& backend, const OffloadOptions& o) {
    return !backend.host() && o.optimizer_device != OffloadDevice::kNone;
  }
  // True when the compute copy of the parameter shard lives in host memory apart from the
  // backend's (offload_param "cpu" or "nvme" on a non-host backend, stage 3, with the
  // update on the host): the update writes it there, and the fetcher copies each layer's
  // part up before its gather.
  static bool params_on_host(const Backend& backend, const OffloadOptions& o) {
    return !backend.host() && o.param_device != OffloadDevice::kNone;
  }
  // How many staging pieces the update keeps: two where the resident range spans several
  // pieces (piece k+1's gradients come down and piece k-1's copy goes up while piece k is
  // updated), one otherwise (one piece; NVMe's chunks, which its swapper pipelines).
  static size_t host_stage_slots(const OffloadOptions& o, size_t owned);
  // The host staging of that update in bytes (0 without it): per slot a piece of
  // gradients, and in mixed precision a piece of the compute copy unless that lives on
  // the host already.
  static size_t host_stage_bytes(const Backend& backend, const OffloadOptions& o, size_t owned);
  static size_t host_stage_elems(const OffloadOptions& o, size_t owned);
  // The range the optimizer updates (and whose gradients this rank owns after reduction).
  ElementRange owned_range() const { return owned_; }
  static ElementRange owned_range(const Partition& partition, int rank, ZeroStage stage);
  // The fp32 parameters the optimizer updates when they are resident and not a master
  // (fp32 compute; null otherwise).
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
  void begin_micro(bool with_backward) override;
  // Where `layer`'s parameters are for the next model call, and giving them back.
  StatusOr<void*> layer_params(int layer) override;
  void release(int layer) override;

  void zero_grads();
  // The optimizer's update over the owned range (streamed through the store), without
  // any exchange: local, so its outcome can be agreed over the world before finish_step.
  Status update(Optimizer& optimizer, const StepHyper& hyper);
  // After the update: stages 1-2 all-gather the parameters, stage 3 refreshes its
  // persistent layers. Collective over dp.
  Status finish_step();
  // After a checkpoint load wrote the owned parameters (collective under stage 3).
  Status finish_load();
  // Every parameter into out (table.numel() floats; the fp32 master in mixed precision).
  // Collective when sharded.
  Status gather_params(float* out);
  // For checkpoints: the fp32 parameters this rank holds (the master in mixed precision),
  // named "param", then the optimizer's state; valid until close_arrays (offloaded: the
  // swap files mapped). close_arrays(true) after writing through them.
  StatusOr<std::vector<OwnedArray>> open_arrays();
  Status close_arrays(bool written);

  // Parameters the model reads plus, in mixed precision, the resident fp32 master.
  size_t param_bytes() const;
  size_t master_bytes() const;
  size_t grad_bytes() const { return grads_.bytes() + grad_shard_.bytes(); }
  size_t optimizer_bytes() const;  // the optimizer's resident state
  size_t fetch_buffer_bytes() const { return fetcher_ ? fetcher_->buffer_bytes() : 0; }
  // Offload: swap and staging buffers in memory, bytes on disk, the disk traffic so far.
  size_t offload_buffer_bytes() const;
  size_t disk_bytes() const { return store_->disk_bytes(); }
  uint64_t disk_read_bytes() const { return io_ ? io_->bytes_read() : 0; }
  uint64_t disk_written_bytes() const { return io_ ? io_->bytes_written() : 0; }
  // Of the figures above, the bytes in host memory apart from the backend's (0 on a host
  // backend): offload buffers, the host master and optimizer state, a host shard.
  size_t host_bytes() const;
  // The last update's host side (updates_on_host): seconds in the host optimizer's pieces,
  // and seconds blocked on the copies between host and backend; zeros otherwise.
  struct HostUpdateTimes {
    double update_s = 0.0;
    double copy_wait_s = 0.0;
  };
  HostUpdateTimes host_update_times() const { return host_times_; }
  // "" without offload; else what is swapped and the I/O path, for the banner.
  std::string offload_description() const;

 private:
  ModelStates(const ParamTable& table, const Partition& partition, ProcessGroup* dp, const ModelStatesOptions& o);
  Status allocate(int n_layer);
  Status make_store();
  Status make_fetcher(int n_layer);
  const Backend& backend() const { return backend_or_cpu(options_.backend); }
  // Chunk [begin, begin + n) of the owned range in the store: the fp32 parameters the
  // optimizer updates, and their cast (or copy) into the compute copy.
  float* fp32_params(size_t begin, void* const* arrays);
  // The compute copy of chunk [begin, begin + n) of the owned range: from the fp32 params
  // (write_compute), and an offloaded shard's in-memory prefix written through (write_cache).
  void* compute_at(size_t begin, void* const* arrays);  // where the chunk's copy lives (fp32 or 16-bit)
  void write_compute(size_t begin, size_t n, const float* params, void* const* arrays);
  void write_cache(size_t begin, size_t n, const void* compute);
  // updates_on_host: the backend the store's arrays and the optimizer use (host), the
  // update of one store chunk in staged pieces, and the compute copy uploaded from host params.
  const Backend& states_backend() const;
  // Where the compute copy of the shard and its in-memory cache live: the host backend
  // with params_on_host, the backend otherwise.
  const Backend& compute_backend() const { return compute_host_ ? staging_backend() : backend(); }
  // Host memory the backend's copies cross each step (staging pieces, a host shard):
  // staging_host() (page-locked on a GPU) with pin_memory, else the states' backend.
  const Backend& staging_backend() const {
    return options_.offload.pin_memory ? backend().staging_host() : states_backend();
  }
  // The tail of a staged piece: its compute copy `src` (host memory) into `dst`, uploaded
  // or, with the shard on the host, copied and written through to the cache.
  CopyHandle place_compute(size_t at, size_t m, void* dst, const void* src);
  Status update_on_host(Optimizer& optimizer, size_t begin, size_t n, float* params, void* const* arrays,
                        float* const* states);
  // Piece k of that update, its gradients on the host: the update, then its compute copy
  // placed (returned: the upload in flight, or null).
  StatusOr<CopyHandle> update_piece(Optimizer& optimizer, size_t begin, size_t k, size_t m, float* params,
                                    void* const* arrays, float* const* states);
  void upload_compute(size_t begin, size_t n, const float* params, void* const* arrays);
  // Stages 1-2 all-gather the compute copy (16-bit or fp32) in buckets.
  Status gather_compute();
  std::vector<bool> flags(bool value) const { return std::vector<bool>(store_->specs().size(), value); }

  const ParamTable& table_;  // the model's (outlives the states)
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
  std::unique_ptr<IoEngine> io_;       // offload only
  std::unique_ptr<StateStore> store_;  // over owned_: [master | param], optimizer state, [param16]
  int master_ = -1;      // the store's fp32 array the optimizer updates as parameters, if any
  int first_state_ = 0;  // the optimizer's first array in the store
  int param16_ = -1;     // mixed precision with parameter offload: the 16-bit shard
  Arena param_cache_;    // parameter offload: the first max_in_cpu shard elements, in memory
  bool host_update_ = false;  // updates_on_host(backend, offload)
  bool compute_host_ = false; // params_on_host(backend, offload)
  HostUpdateTimes host_times_;
  size_t stage_piece_ = 0;    // host_update_: elements per staging piece
  size_t stage_slots_ = 0;    // and how many pieces each staging arena holds (host_stage_slots)
  Arena stage_grads_;         // host_update_: pieces of the owned gradients, on the host (fp32)
  Arena stage_copy_;          // host_update_, !compute_host_: pieces of the compute copy, on the host
  std::unique_ptr<SwappedShard> swapped_shard_;  // parameter offload
  std::unique_ptr<ParamFetcher> fetcher_;  // stage 3
};

}  // namespace zt
