// Trainer: trains a GptModel on one rank of a data-parallel group (a group of one for a
// single process: the reference every distributed mode is compared against). Owns the
// model states as the ZeRO stage says (partition.h thresholds): full or sharded
// parameters, gradients and optimizer state; the optimizer and LR schedule; and the
// communication that makes every rank's step equal to the single-process step on the
// same global batch: bucketed gradient reduction overlapped with backward
// (GradReducer), ZeRO-3 parameter gathers with prefetch (ParamFetcher), sharded norms,
// and the post-step parameter all-gather of stages 1-2.
//
// Loss normalisation: a step's loss is the mean over every counted (non-ignored) target
// token of the global batch, so it does not depend on how the batch is cut into
// micro-batches or ranks. With no ignored tokens this equals DeepSpeed's mean of
// per-micro-batch means.
// Thread-safety: one training thread per rank; kernels use OpenMP internally.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "backend/staged_process_group.h"
#include "checkpoint/state_view.h"
#include "comm/process_group.h"
#include "core/status.h"
#include "engine/compression.h"
#include "engine/efficiency.h"
#include "engine/sequence_slices.h"
#include "nn/batch_staging.h"
#include "nn/gpt_model.h"
#include "nn/gpt_training.h"
#include "nn/layer_walk.h"
#include "optim/adamw.h"
#include "optim/lr_schedule.h"
#include "optim/optimizer.h"
#include "optim/sgd.h"
#include "parallel/data/grad_reducer.h"
#include "parallel/data/zero_options.h"
#include "parallel/grid.h"
#include "parallel/pipeline/schedule.h"
#include "parallel/offload/activation_host_stash.h"
#include "parallel/offload/activation_swap.h"
#include "parallel/zero/model_states.h"
#include "parallel/zero/partition.h"

namespace zt {

struct TrainerOptions : GptTrainingOptions {
  ZeroOptions zero;
  // Model parallelism: this rank's part of the model (pipeline stage, tensor-parallel
  // slice) and how its pipeline runs. Default: the whole model.
  GptLayout layout;
  PipeScheduleKind pipe_schedule = PipeScheduleKind::k1F1B;
  int micro_batches = 1;         // per step on this rank (pipeline slots are sized from it)
  std::vector<bool> checkpoint;  // per global block: activation checkpointing
  bool partition_activations = false;
  // cpu_checkpointing to disk: the inputs of checkpointed blocks go to a swap file in this
  // directory between forward and backward (empty: they stay in the activation arena).
  std::string activation_swap_dir;
  // cpu_checkpointing without a disk: on a backend whose memory is not the host's, those
  // inputs go to host memory instead (ActivationHostStash); a host backend has nothing to move.
  bool activation_host_stash = false;
  bool block_routing = false;  // the model may route blocks (nn/block_route.h) beyond `efficiency`'s
  bool flash_attention = false;  // training.attention "flash": no T x T probabilities kept (kernels/cpu/flash_attention.h)
  EfficiencyOptions efficiency;  // curriculum learning, progressive layer drop, random-LTD
};

// Where the inputs of checkpointed blocks go between forward and backward: a stash on disk
// (activation_swap_dir) or in host memory (activation_host_stash on a non-host backend), if
// any block is checkpointed.
enum class ActivationStashKind { kNone, kDisk, kHost };
ActivationStashKind activation_stash_kind(const TrainerOptions& o);

struct StepStats {
  int64_t step = 0;          // optimizer steps completed, including this one
  double loss = 0.0;         // mean over the global batch's counted tokens
  double grad_norm = 0.0;    // global L2 norm before clipping
  double lr = 0.0;
  int64_t tokens = 0;        // tokens this rank processed
  double forward_s = 0.0;    // forward + loss
  double backward_s = 0.0;   // backward, including the wait for gradient reductions
  double optimizer_s = 0.0;  // norm, clipping, update and parameter all-gather
  // Offload on a device (the update on the host): of optimizer_s, the host optimizer's
  // seconds and the seconds blocked on copies between host and device.
  double host_update_s = 0.0;
  double copy_wait_s = 0.0;
  double pipeline_wait_s = 0.0;  // pipeline stages: time blocked on the neighbours (the bubble)
  bool skipped = false;      // fp16: an inf/NaN gradient on some rank; no update was made
  double loss_scale = 1.0;   // fp16: the scale this step's backward used (1 otherwise)
  double next_loss_scale = 1.0;  // fp16: the scale after this step's update
  uint64_t disk_read_bytes = 0;     // NVMe offload: bytes this step read from and wrote to disk
  uint64_t disk_written_bytes = 0;
  // MoE: the balance loss (DeepSpeed's l_aux summed over MoE blocks, or HF's), before its
  // coefficient, averaged over the global batch's micro-batches (0 for a dense model).
  double moe_aux_loss = 0.0;
  // MoE, this rank's micro-batches and MoE blocks: token slots routed to each expert
  // (before capacity drops), and slots dropped by capacity.
  std::vector<int64_t> moe_expert_tokens;
  int64_t moe_dropped = 0;
};

struct MemoryReport {
  size_t param_bytes = 0;      // parameters held by this rank (full, or its shard), plus the fp32 master
  size_t master_bytes = 0;     // mixed precision: the fp32 master part of param_bytes
  size_t grad_bytes = 0;       // gradients held (full, or the shard)
  size_t optimizer_bytes = 0;  // optimizer state held in memory
  size_t bucket_bytes = 0;     // gradient buckets, ZeRO-3 gather buffers, pipeline gradient hand-offs
  size_t offload_buffer_bytes = 0;  // NVMe offload: swap and staging buffers in memory
  size_t disk_bytes = 0;            // NVMe offload: bytes of state on disk
  uint64_t disk_read_bytes = 0;     // NVMe offload: moved by the last step
  uint64_t disk_written_bytes = 0;
  size_t activation_bytes = 0;
  size_t peak_rss_bytes = 0;
  // Of the figures above, the bytes in host memory apart from the backend's (offload on a
  // device: the host master and optimizer state, staging and swap buffers, a host
  // parameter shard, the activation stash); 0 on a host backend, where all is host memory.
  size_t host_bytes = 0;
};

struct PipeComm;  // a step's point-to-point operations in flight (trainer_pipeline.cc)

class Trainer {
 public:
  // groups: this rank's communicators (null: a single process). Validates the options
  // and initialises parameters (each rank only what it holds).
  static StatusOr<std::unique_ptr<Trainer>> create(const TrainerOptions& options, const ParallelGroups* groups);
  // Data parallelism only: dp is this rank's data-parallel group (null: a single process).
  static StatusOr<std::unique_ptr<Trainer>> create(const TrainerOptions& options, ProcessGroup* dp = nullptr);
  ~Trainer();

  // One optimizer step over this rank's micro-batches (gradient accumulation = their
  // count, the same on every rank). Collective over the data-parallel group.
  StatusOr<StepStats> step(const std::vector<MicroBatch>& micro_batches);

  // Mean loss over the counted tokens of `batches` (the whole validation set, the same
  // list on every rank; each rank evaluates its share). Collective; parameters unchanged.
  StatusOr<double> evaluate(const std::vector<MicroBatch>& batches);

  // The full flat parameters into `out` (table.numel() floats); collective under ZeRO-3.
  Status gather_params(float* out);

  // Checkpoints (trainer_checkpoint.cc): where this rank's parameters and optimizer
  // state are, for checkpoint/sharded_save.h and sharded_load.h; valid until
  // close_checkpoint_view (offloaded state is mapped from its swap files; device state
  // is copied to host mirrors and, when written, back), which is given whether the
  // arrays were written.
  StatusOr<RankStateView> checkpoint_view();
  Status close_checkpoint_view(bool written);
  // After a load: the step counters, and ZeRO-3's persistent copies (collective then).
  Status finish_load(int64_t global_step, int64_t optimizer_steps);

  MemoryReport memory() const;
  const LayerTimes& layer_times() const { return layer_times_; }
  GptModel& model() { return *model_; }
  const ParamTable& param_table() const { return model_->param_table(); }
  // The full parameter arena; empty under ZeRO-3 (use gather_params).
  Arena& params() { return states_->full_params_arena(); }
  // The full gradient arena; empty under ZeRO-2/3.
  Arena& grads() { return states_->full_grads_arena(); }
  Optimizer& optimizer() { return *optimizer_; }
  const Backend& backend() const { return backend_; }
  // "" without NVMe offload; else what is swapped and how, for the banner.
  std::string offload_description() const;
  const TrainerOptions& options() const { return options_; }
  ProcessGroup& dp() { return *dp_; }
  const ProcessGroup* sp_group() const { return sp_; }  // null without sequence parallelism
  const ProcessGroup* hpz_group() const { return hpz_; }  // null without ZeRO++ hpZ
  // Which sequences this rank reads: the data-parallel ranks proper, dp / sp of them
  // (parallel/grid.h; the dp group also holds the sequence-parallel ranks), and its place.
  int data_size() const { return dp_->size() / options_.layout.sp_size; }
  int data_rank() const { return dp_->rank() / options_.layout.sp_size; }
  ProcessGroup& world() { return *world_; }
  int pp_size() const { return pp_ != nullptr ? pp_->size() : 1; }
  bool pipelined() const { return pp_ != nullptr && pp_->size() > 1; }
  const Partition& partition() const { return partition_; }
  int64_t global_step() const { return global_step_; }
  // The learning rate the next step will use. The schedule counts optimizer updates:
  // a step skipped for an fp16 overflow does not advance it (DeepSpeed's rule).
  double next_lr() const { return schedule_.at(optimizer_->step_count() - 1).lr; }
  // fp16's loss scaler (null for fp32 and bf16 compute).
  const LossScaler* loss_scaler() const { return scaler_ ? &*scaler_ : nullptr; }
  // The efficiency features' schedules (efficiency.h, compression.h), for checkpoints.
  Json schedules_state() const;
  Status restore_schedules(const Json& state, const std::string& where);
  // What compression_training selected, for the banner.
  const std::vector<std::string>& notes() const { return notes_; }
  int last_seq_len() const { return step_seq_; }
  void set_loss_scaler_state(const LossScalerState& s) { scaler_->set_state(s); }

 private:
  Trainer(const TrainerOptions& options, ProcessGroup* dp, ProcessGroup* zero);
  // pending: a local failure before the states (the activation swap) that every rank
  // must learn about in the same agreement.
  Status init_states(Status pending);
  Status create_activation_swap(GptModelOptions* mo);
  uint64_t disk_read() const;
  uint64_t disk_written() const;
  // The job's groups (dp_ and zero_ are set), each through host staging where it cannot
  // reach the backend's memory (backend/staged_process_group.h).
  void take_groups(const ParallelGroups* groups, std::unique_ptr<StagedGroups> staged);
  Status validate_parallel() const;
  Status validate_expert_parallel() const;
  Status validate_sequence_parallel() const;
  Status validate_interleaved() const;  // virtual pipeline stages (trainer_pipeline.cc)

  bool expert_parallel() const { return options_.layout.ep_size > 1; }
  // Where the layer walk reads parameters: the model states, through compression's
  // quantized copies when it is on.
  LayerParamSource& layer_source();
  Status prepare_micro(size_t i, int B, int T);
  // With pipelining (trainer_pipeline.cc): the stage's schedule for all micro-batches.
  // Micro-batch i's loss goes to staging_'s slot i (read once by the caller).
  Status run_pipeline(const std::vector<MicroBatch>& mbs, float dloss, StepStats* stats);
  // This stage's forward (with the loss on the last) and backward of micro-batch mb, B x T.
  Status stage_forward(const std::vector<MicroBatch>& mbs, int mb, int B, int T);
  Status stage_backward(const std::vector<MicroBatch>& mbs, int mb, float dloss);
  // One instruction of this stage's schedule (trainer_pipeline.cc).
  Status run_pipe_instruction(const std::vector<PipeInstruction>& list, size_t i, const std::vector<MicroBatch>& mbs,
                              float dloss, PipeComm* comm, StepStats* stats);
  Status run_step_instruction(PipeOp op, PipeComm* comm, StepStats* stats);  // the reductions after the schedule
  // Before instruction `next` (after next - 1): posts the receives later instructions wait for.
  void post_receives(const std::vector<PipeInstruction>& list, size_t next, int M, PipeComm* comm);
  // Waits for a receive posted ahead, counting the wait as pipeline wait.
  Status wait_recv(WorkHandle& posted, StepStats* stats);
  // A pipeline receive into `into` from stage `from`, its wait counted as pipeline wait.
  Status stage_recv(void* into, size_t bytes, int from, int tag, StepStats* stats);
  // Without pipelining: forward, loss and backward of each micro-batch (B x T) in turn.
  Status run_micro_batches(const std::vector<MicroBatch>& mbs, int B, int T, float dloss, StepStats* stats);
  // One batch forward through the pipeline, its loss (last stage) into `loss_slot`.
  Status evaluate_pipeline(const MicroBatch& batch, double* loss_slot);
  // The sum of the first n staged losses, in micro-batch order (one copy).
  double staged_loss_sum(size_t n) const;
  Status reduce_tied_grads();
  Status flush_grad_reductions();
  StatusOr<bool> update_parameters(const ScheduleValue& sched, StepStats* stats);
  // The global gradient norm, counting every parameter once across dp, pp and tp.
  StatusOr<double> global_grad_norm();
  // The step's sum of squares, in backend memory (norm_acc_): added to by the kernel where
  // the gradients live, read once per step.
  void add_squares(const float* x, size_t n) { backend_.ops().sum_squares(norm_acc_.as<double>(), x, static_cast<int64_t>(n)); }
  double read_squares() const;
  StatusOr<double> all_reduce_sum(ProcessGroup* g, double value);
  // MoE: the balance loss's gradient weight for this step, and the step's reported loss.
  void begin_moe_step(double loss_scale, double micro_global);
  void note_moe_routing();  // after a micro-batch's forward
  Status finish_moe_step(double micro_global, StepStats* stats);
  StatusOr<int64_t> all_reduce_sum(ProcessGroup* g, int64_t value);
  int64_t train_batch_size_of(int64_t local_micro_batches) const;

  TrainerOptions options_;
  const Backend& backend_;  // options_.backend, or cpu_backend()
  std::unique_ptr<ProcessGroup> own_group_;  // the group of one when no dp group is given
  std::unique_ptr<StagedGroups> staged_groups_;  // the host-staged groups below (backend/staged_process_group.h)
  ProcessGroup* world_ = nullptr;  // every rank of the job (the dp group without model parallelism)
  ProcessGroup* dp_;
  ProcessGroup* pp_ = nullptr;
  ProcessGroup* tp_ = nullptr;
  ProcessGroup* tied_ = nullptr;
  ProcessGroup* ep_ = nullptr;   // expert parallelism: the ranks the experts are spread over
  ProcessGroup* edp_ = nullptr;  // and the ranks holding the same experts (null: ep = 1)
  ProcessGroup* sp_ = nullptr;   // sequence parallelism: the ranks sharing this rank's sequences (null: sp = 1)
  ProcessGroup* hpz_ = nullptr;  // ZeRO++ hpZ: the secondary-partition group (null: hpz = 1)
  SequenceSlicer slicer_{options_.layout.sp_rank, options_.layout.sp_size};  // this rank's positions of them
  // The group ZeRO partitions over: dp, or with expert parallelism at stages 1+ the
  // expert-data-parallel group (each rank's table holds its own experts; its dense part is
  // then held by every rank of the ep group).
  ProcessGroup* zero_;
  std::vector<Arena> grad_send_;  // pipeline: per slot, the input gradient being sent
  std::vector<Arena> grad_recv_;  // pipeline: per slot, the output gradient received ahead of its backward
  Arena norm_acc_;  // one double (two f32 elements) of backend memory: the step's sum of squares
  std::unique_ptr<BatchStaging> staging_;  // the step's tokens, targets and losses in backend memory
  Partition partition_;
  std::unique_ptr<IoEngine> act_io_;        // activation swap (declared before the model, which uses it)
  std::unique_ptr<ActivationStash> stash_;  // activation_swap_dir: ActivationSwap; else ActivationHostStash
  std::unique_ptr<GptModel> model_;
  std::unique_ptr<ModelStates> states_;  // parameters, gradients and their shards under ZeRO
  std::unique_ptr<Optimizer> optimizer_;
  std::unique_ptr<GradReducer> reducer_;
  LrSchedule schedule_;
  int64_t global_step_ = 0;
  std::optional<LossScaler> scaler_;  // f16 compute only
  uint64_t last_disk_read_ = 0, last_disk_written_ = 0;  // of the last step
  LayerTimes layer_times_;  // of the last step (without pipelining)
  double moe_aux_sum_ = 0.0;  // this step's balance losses, summed over this rank's micro-batches
  StepStats moe_counts_;      // this step's expert token counts and drops so far
  EfficiencySchedules efficiency_;
  std::unique_ptr<Compressor> compressor_;  // compression_training
  std::unique_ptr<CompressedParams> compressed_params_;  // over states_, when compressor_ is set
  std::vector<std::string> notes_;
  int step_seq_ = 0;  // this step's sequence length (the curriculum's), or seq_len
  std::vector<std::vector<BlockRoute>> step_routes_;  // this step's routes per local micro-batch
  // checkpoint_view's host copies of the arrays when the backend's memory is not host memory.
  struct HostMirror {
    float* device;
    std::vector<float> host;
  };
  std::vector<HostMirror> mirrors_;
};

}  // namespace zt
