// The training step on one data-parallel rank; see trainer.h.
#include "engine/trainer.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "core/memory_stats.h"
#include "core/test_hooks.h"
#include "core/timer.h"
#include "optim/grad_clip.h"
#include "engine/optimizer_factory.h"
#include "nn/gpt_activations.h"

namespace zt {

Trainer::Trainer(const TrainerOptions& options, ProcessGroup* dp, ProcessGroup* zero)
    : options_(options),
      backend_(backend_or_cpu(options.backend)),
      dp_(dp),
      zero_(zero),
      partition_(build_gpt_param_table(options.model, options.layout).numel(), zero->size(),
                 partition_align(backend_.compute_dtype())),
      schedule_(options.schedule),
      efficiency_(options.efficiency, options.model.n_layer, options.seed),
      step_seq_(options.seq_len) {}

Trainer::~Trainer() = default;

StatusOr<std::unique_ptr<Trainer>> Trainer::create(const TrainerOptions& options, ProcessGroup* dp) {
  ParallelGroups groups;
  groups.world = dp;
  groups.dp = dp;
  return create(options, &groups);
}

namespace {

// What create refuses before anything is sized, the model family's limits included (Llama:
// fp32, whole model, no checkpointing).
Status validate_options(const TrainerOptions& options) {
  ZT_RETURN_IF_ERROR(options.model.validate());
  ZT_RETURN_IF_ERROR(options.layout.validate(options.model));
  if (options.micro_batch <= 0) {
    return Status::InvalidArgument("micro batch size must be positive, got " + std::to_string(options.micro_batch));
  }
  if (options.seq_len <= 0 || options.seq_len > options.model.n_positions) {
    return Status::InvalidArgument("sequence length " + std::to_string(options.seq_len) + " must be in [1, n_positions=" +
                                   std::to_string(options.model.n_positions) + "]");
  }
  ZT_RETURN_IF_ERROR(validate_efficiency(options.efficiency, options.model.n_layer, options.layout.tp_size,
                                         options.partition_activations,
                                         activation_stash_kind(options) != ActivationStashKind::kNone));
  if (options.flash_attention && options.efficiency.compression.activation.enabled) {  // it quantizes O in place
    return Status::Unimplemented("/training/attention: \"flash\" with compression_training's activation quantization is "
                                 "not supported yet: the backward reads the attention output it quantizes");
  }
  GptModelOptions probe;
  probe.layout = options.layout;
  probe.backend = options.backend;
  probe.flash_attention = options.flash_attention;
  probe.checkpoint = options.checkpoint;
  const MoeConfig& moe = options.model.moe;
  const bool whole = options.layout.holds_every_block(options.model);
  if (moe.enabled() && moe.gate.routing == MoeRouting::kMixtral && moe.aux_loss_coef > 0.0 && !whole) {
    return Status::Unimplemented("model.moe.router_aux_loss_coef: HF's balance loss spans every MoE block, and a "
                                 "pipeline stage holds only some; use pp 1, or coefficient 0");
  }
  return GptModel::check_supported(options.model, probe);
}

// The model's options on this rank: its part, the micro-batch shape, the pipeline's slots.
GptModelOptions model_options(const TrainerOptions& options, const Backend* backend, ProcessGroup* tp, ProcessGroup* pp,
                              ProcessGroup* ep, ProcessGroup* sp) {
  GptModelOptions mo;
  mo.layout = options.layout;
  mo.backend = backend;
  mo.tp = options.layout.tp_size > 1 ? tp : nullptr;
  mo.ep = options.layout.ep_size > 1 ? ep : nullptr;
  mo.sp = options.layout.sp_size > 1 ? sp : nullptr;
  mo.max_batch = options.micro_batch;
  mo.max_seq = options.layout.local_seq(options.seq_len);
  const int M = std::max(1, options.micro_batches), v = options.layout.chunk_count();
  const bool piped = pp != nullptr && pp->size() > 1;
  mo.slots = piped ? pipe_schedule_slots(options.pipe_schedule, M, pp->size(), pp->rank(), v) : 1;
  mo.shared_head = piped && pipe_schedule_head_at_once(options.pipe_schedule, M, pp->size(), pp->rank(), v);
  mo.checkpoint = options.checkpoint;
  mo.partition_activations = options.partition_activations;
  mo.block_routing = options.block_routing || options.efficiency.routes_blocks();
  mo.flash_attention = options.flash_attention;
  return mo;
}

// Per activation slot, one (B, T, C) hand-off buffer of the rank's gradients (none where the
// rank never sends, or never receives, them).
StatusOr<std::vector<Arena>> pipe_buffers(const Backend& backend, const TrainerOptions& o, DType dtype, bool needed,
                                          int slots, const char* what) {
  std::vector<Arena> out;
  const size_t n = static_cast<size_t>(o.micro_batch) * o.seq_len * o.model.n_embd;
  for (int i = 0; needed && i < slots; ++i) {
    ZT_ASSIGN_OR_RETURN(Arena buf, backend.allocate(n, dtype, what));
    out.push_back(std::move(buf));
  }
  return out;
}

}  // namespace

StatusOr<std::unique_ptr<Trainer>> Trainer::create(const TrainerOptions& options, const ParallelGroups* groups) {
  ZT_RETURN_IF_ERROR(validate_options(options));
  std::unique_ptr<ProcessGroup> own;
  ProcessGroup* dp = groups != nullptr ? groups->dp : nullptr;
  if (dp == nullptr) {
    own = make_single_process_group();
    dp = own.get();
  }
  // ZeRO partitions over dp, or with expert parallelism at stages 1+ over the
  // expert-data-parallel group (trainer.h).
  ProcessGroup* zero = dp;
  if (groups != nullptr && groups->ep != nullptr && options.zero.stage != ZeroStage::kNone) zero = groups->edp;
  if (zero == nullptr) return Status::InvalidArgument("expert parallelism needs the expert-data-parallel group");
  // Groups that cannot reach the backend's memory move it through host buffers.
  auto staged = std::make_unique<StagedGroups>(backend_or_cpu(options.backend));
  std::unique_ptr<Trainer> t(new Trainer(options, staged->wrap(dp), staged->wrap(zero)));
  t->own_group_ = std::move(own);
  t->take_groups(groups, std::move(staged));
  ZT_RETURN_IF_ERROR(t->validate_parallel());
  if (t->backend_.compute_dtype() == DType::kF16) {
    ZT_RETURN_IF_ERROR(LossScaler::validate(options.loss_scaler));
    t->scaler_.emplace(options.loss_scaler);
  }
  GptModelOptions mo = model_options(options, &t->backend_, t->tp_, t->pp_, t->ep_, t->sp_);
  Status swap = ModelStates::validate_offload(options.zero.stage, options.zero.offload);  // names the key at fault
  if (swap.ok()) swap = t->create_activation_swap(&mo);
  t->model_ = GptModel::create(options.model, mo);
  if (t->pipelined()) {
    const int S = t->pp_->size(), s = t->pp_->rank(), v = options.layout.chunk_count();
    const DType dt = t->model_->activation_dtype();
    ZT_ASSIGN_OR_RETURN(t->grad_send_, pipe_buffers(t->backend_, options, dt, pipe_has_prev(S, s, v - 1), mo.slots,
                                                    "a pipeline gradient send buffer"));
    ZT_ASSIGN_OR_RETURN(t->grad_recv_, pipe_buffers(t->backend_, options, dt, pipe_has_next(S, s, 0, v), mo.slots,
                                                    "a pipeline gradient receive buffer"));
  }
  ZT_ASSIGN_OR_RETURN(t->norm_acc_, t->backend_.allocate(2, DType::kF32, "the step's gradient-norm accumulator"));
  t->staging_ = std::make_unique<BatchStaging>(t->backend_);
  ZT_RETURN_IF_ERROR(t->init_states(swap));
  if (options.efficiency.compression.any()) {
    ZT_ASSIGN_OR_RETURN(t->compressor_, Compressor::create(options.efficiency.compression, t->model_->param_table(),
                                                           options.model, t->backend_, &t->notes_));
    t->compressed_params_ = std::make_unique<CompressedParams>(*t->states_, *t->compressor_);
  }
  return t;
}

void Trainer::take_groups(const ParallelGroups* groups, std::unique_ptr<StagedGroups> staged) {
  if (groups != nullptr) {
    world_ = staged->wrap(groups->world);
    pp_ = staged->wrap(groups->pp);
    tp_ = staged->wrap(groups->tp);
    tied_ = staged->wrap(groups->tied);
    ep_ = staged->wrap(groups->ep);
    edp_ = staged->wrap(groups->edp);
    sp_ = staged->wrap(groups->sp);
    hpz_ = staged->wrap(groups->hpz);
  }
  if (world_ == nullptr) world_ = dp_;
  if (staged->any()) {
    notes_.push_back("collectives stage through host memory (the process groups cannot reach the backend's memory): "
                     "correct, but each waits for the device and crosses the bus twice");
  }
  staged_groups_ = std::move(staged);
  // The groups move this backend's arenas inside its memory domain (comm/memory_domain.h).
  for (ProcessGroup* g : {world_, dp_, pp_, tp_, tied_, ep_, edp_, sp_}) {
    if (g != nullptr) g->set_memory_domain(backend_.memory_domain());
  }
}

Status Trainer::validate_parallel() const {
  const GptLayout& lay = options_.layout;
  const int pp = pp_ != nullptr ? pp_->size() : 1, tp = tp_ != nullptr ? tp_->size() : 1;
  if (tp != lay.tp_size || (tp_ != nullptr && tp_->rank() != lay.tp_rank)) {
    return Status::InvalidArgument("the tensor-parallel group does not match the layout's tp rank and size");
  }
  if (pp > 1) {
    const bool first = pp_->rank() == 0, last = pp_->rank() == pp - 1;
    if (lay.embedding != first || lay.head != last) {
      return Status::InvalidArgument("pipeline stage " + std::to_string(pp_->rank()) + " of " + std::to_string(pp) +
                                     ": the layout must hold the embeddings exactly on the first stage and the head on the last");
    }
    if ((first || last) && (tied_ == nullptr || tied_->size() != 2)) {
      return Status::InvalidArgument("pipeline end stages need the tied-weight group of their first and last stage");
    }
    ZT_RETURN_IF_ERROR(ModelStates::validate(options_.zero.stage, pp));
    ZT_RETURN_IF_ERROR(validate_interleaved());
  } else if (!lay.embedding || !lay.head || !lay.holds_every_block(options_.model)) {
    return Status::InvalidArgument("without pipeline parallelism the layout must hold every block, the embeddings and the head");
  }
  ZT_RETURN_IF_ERROR(validate_sequence_parallel());
  const int hpz = options_.zero.stage == ZeroStage::kParameters ? options_.zero.fetch.hpz_partition_size : 1;
  if ((hpz > 1) != (hpz_ != nullptr) || (hpz_ != nullptr && (hpz_->size() != hpz || dp_->size() % hpz != 0))) {
    return Status::InvalidArgument("/zero_optimization/zero_hpz_partition_size: " + std::to_string(hpz) +
                                   " needs its group of that many consecutive data-parallel ranks");
  }
  const ZeroOptions& z = options_.zero;
  if (z.reduce.quantized_gradients && z.stage == ZeroStage::kParameters &&
      (ep_ != nullptr || z.reduce.wire != CommDType::kF32 || !backend_.host())) {
    return Status::InvalidArgument("/zero_optimization/zero_quantized_gradients: qgZ reduces stage 3's fp32 gradients "
                                   "in host memory, without expert parallelism");
  }
  return validate_expert_parallel();
}

// Expert parallelism: the groups match the layout.
Status Trainer::validate_expert_parallel() const {
  const GptLayout& lay = options_.layout;
  const int ep = ep_ != nullptr ? ep_->size() : 1;
  if (ep != lay.ep_size || (ep_ != nullptr && ep_->rank() != lay.ep_rank)) {
    return Status::InvalidArgument("the expert-parallel group does not match the layout's ep rank and size");
  }
  if (ep == 1) return Status::OK();
  if (edp_ == nullptr || edp_->size() * ep != dp_->size()) {
    return Status::InvalidArgument("expert parallelism needs the expert-data-parallel group of dp / ep ranks");
  }
  return Status::OK();
}

// Sequence parallelism: the group is sp consecutive dp ranks (parallel/grid.h), the sequence
// splits evenly, and nothing changes a sequence's length or routes its tokens.
Status Trainer::validate_sequence_parallel() const {
  const int sp = sp_ != nullptr ? sp_->size() : 1;
  const GptLayout& lay = options_.layout;
  if (sp != lay.sp_size || (sp_ != nullptr && sp_->rank() != lay.sp_rank)) {
    return Status::InvalidArgument("the sequence-parallel group does not match the layout's sp rank and size");
  }
  if (sp == 1) return Status::OK();
  if (dp_->size() % sp != 0 || dp_->rank() % sp != sp_->rank()) {
    return Status::InvalidArgument("the sequence-parallel group must be sp consecutive ranks of the data-parallel group");
  }
  const std::string key = "/sequence_parallel_size: " + std::to_string(sp);
  if (options_.seq_len % sp != 0) {
    return Status::InvalidArgument(key + " does not divide the sequence length " + std::to_string(options_.seq_len));
  }
  if (options_.efficiency.seqlen_curriculum.has_value() || options_.efficiency.routes_blocks() || options_.block_routing) {
    return Status::Unimplemented(key + " with curriculum learning, progressive layer drop or random-LTD is not "
                                 "supported yet: they shorten or route each rank's part of a sequence");
  }
  return Status::OK();
}

ActivationStashKind activation_stash_kind(const TrainerOptions& o) {
  if (std::count(o.checkpoint.begin(), o.checkpoint.end(), true) == 0) return ActivationStashKind::kNone;
  if (!o.activation_swap_dir.empty()) return ActivationStashKind::kDisk;
  return o.activation_host_stash && !backend_or_cpu(o.backend).host() ? ActivationStashKind::kHost
                                                                       : ActivationStashKind::kNone;
}

Status Trainer::create_activation_swap(GptModelOptions* mo) {
  const ActivationStashKind kind = activation_stash_kind(options_);
  if (kind == ActivationStashKind::kNone) return Status::OK();
  const size_t bytes = static_cast<size_t>(options_.micro_batch) *
                       static_cast<size_t>(options_.layout.local_seq(options_.seq_len)) *
                       static_cast<size_t>(options_.model.n_embd) * dtype_size(backend_.compute_dtype());
  if (kind == ActivationStashKind::kHost) {
    ZT_ASSIGN_OR_RETURN(stash_, ActivationHostStash::create(
                                    backend_, mo->slots, stashed_blocks(options_.model, options_.layout, options_.checkpoint),
                                    options_.model.n_layer, bytes, options_.zero.offload.pin_memory));
    mo->stash = stash_.get();
    return Status::OK();
  }
  ZT_ASSIGN_OR_RETURN(act_io_, IoEngine::create(options_.zero.offload.aio));
  const std::string path = options_.activation_swap_dir + "/zerotrain." + std::to_string(::getpid()) + ".rank" +
                           std::to_string(world_->rank()) + ".activations.swp";
  ZT_ASSIGN_OR_RETURN(stash_, ActivationSwap::create(backend_, act_io_.get(), path, mo->slots, options_.model.n_layer, bytes));
  mo->stash = stash_.get();
  return Status::OK();
}

std::string Trainer::offload_description() const {
  std::string d = states_->offload_description();
  if (activation_stash_kind(options_) == ActivationStashKind::kHost) {
    d += std::string(d.empty() ? "" : "; ") + "checkpointed activations in host memory (" +
         std::to_string(stash_->buffer_bytes() >> 20) + " MiB)";
  } else if (stash_) {
    d += std::string(d.empty() ? "" : "; ") + "checkpointed activations on disk (" + options_.activation_swap_dir + ", " +
         act_io_->mode() + ")";
  }
  return d;
}

uint64_t Trainer::disk_read() const { return states_->disk_read_bytes() + (act_io_ ? act_io_->bytes_read() : 0); }

uint64_t Trainer::disk_written() const {
  return states_->disk_written_bytes() + (act_io_ ? act_io_->bytes_written() : 0);
}

Status Trainer::init_states(Status pending) {
  const ParamTable& table = model_->param_table();
  const ElementRange owned = ModelStates::owned_range(partition_, zero_->rank(), options_.zero.stage);
  // The optimizer's state lives in the model states' store (in memory, or swapped).
  ZT_ASSIGN_OR_RETURN(optimizer_, make_optimizer(options_, table, owned, dp_, pipelined()));
  ModelStatesOptions so;
  so.stage = options_.zero.stage;
  so.optimizer_state = optimizer_->state_names();
  so.offload = options_.zero.offload;
  so.offload.world_rank = world_->rank();
  so.allgather_bucket_elems = options_.zero.allgather_bucket_elems;
  so.fetch = options_.zero.fetch;
  so.fetch.hpz = hpz_;  // ZeRO++ hpZ (validate_parallel checked it)
  so.seed = options_.seed;
  so.backend = &backend_;
  // Creating the states may fail on one rank only (memory, a full or unwritable swap
  // disk): every rank learns it before the first collective.
  auto created = pending.ok() ? ModelStates::create_local(table, partition_, zero_, options_.model.n_layer, so)
                              : StatusOr<std::unique_ptr<ModelStates>>(pending);
  ZT_ASSIGN_OR_RETURN(const int64_t failed, all_reduce_sum(world_, int64_t{!created.ok()}));
  ZT_RETURN_IF_ERROR(created.status());
  if (failed > 0) {
    return Status::FailedPrecondition("creating the model states failed on " + std::to_string(failed) +
                                      " other rank(s); see their errors");
  }
  states_ = std::move(created).value();
  ZT_RETURN_IF_ERROR(states_->publish());
  GradReducerOptions ro = options_.zero.reduce;
  ro.stage = so.stage;
  ro.backend = &backend_;
  const bool ep_stage0 = expert_parallel() && so.stage == ZeroStage::kNone;
  ro.expert_dp = ep_stage0 ? edp_ : nullptr;
  ro.dense_ep = expert_parallel() && !ep_stage0 ? ep_ : nullptr;
  ro.quantized_gradients = ro.quantized_gradients && so.stage == ZeroStage::kParameters;  // DeepSpeed's scope
  ro.node = hpz_;  // ZeRO++ qgZ's two levels: the hpZ group is the node
  reducer_ = std::make_unique<GradReducer>(table, partition_, zero_, ro, states_->full_grads(), states_->grad_shard());
  states_->bind(model_.get());
  return Status::OK();
}

StatusOr<double> Trainer::all_reduce_sum(ProcessGroup* g, double value) {
  if (g == nullptr || g->size() == 1) return value;
  ZT_RETURN_IF_ERROR(g->all_reduce(&value, 1, CommDType::kF64)->wait());
  return value;
}

StatusOr<int64_t> Trainer::all_reduce_sum(ProcessGroup* g, int64_t value) {
  if (g == nullptr || g->size() == 1) return value;
  ZT_RETURN_IF_ERROR(g->all_reduce(&value, 1, CommDType::kI64)->wait());
  return value;
}

double Trainer::staged_loss_sum(size_t n) const {
  double sum = 0.0;
  for (const LossSum& l : staging_->read_losses(n)) sum += l.sum;
  return sum;
}

double Trainer::read_squares() const {
  double sq = 0.0;
  backend_.copy_to_host(&sq, norm_acc_.as<double>(), sizeof(double));
  return sq;
}

// Every parameter counted once: tensor-parallel copies only on tp rank 0, the last
// pipeline stage's copy of wte not at all, ZeRO shards each on their owner, and the
// full gradients of stage 0 only on data-parallel rank 0; then summed over the world.
StatusOr<double> Trainer::global_grad_norm() {
  const ZeroStage stage = options_.zero.stage;
  const ElementRange range = states_->owned_range();
  const float* owned = states_->owned_grads();
  const bool model_parallel = pipelined() || options_.layout.tp_size > 1 || expert_parallel();
  norm_acc_.zero();
  if (!optimizer_->engine_reduces_gradients()) {  // local gradients: the rms of the ranks' estimates dp x g_r
    const double dp = dp_->size();
    add_squares(owned, range.size());
    ZT_ASSIGN_OR_RETURN(const double sq, all_reduce_sum(dp_, read_squares()));
    return std::sqrt(sq * dp);  // sqrt(sum_r ||dp g_r||^2 / dp)
  }
  if (!model_parallel) {
    add_squares(owned, range.size());
    if (stage == ZeroStage::kNone) return std::sqrt(read_squares());  // same sums on every rank
    ZT_ASSIGN_OR_RETURN(const double sq, all_reduce_sum(dp_, read_squares()));
    return std::sqrt(sq);
  }
  // Stage 0: replicas count on dp rank 0, a routed expert's tensors on the first rank
  // holding them (expert-data-parallel rank 0). Stages 1+: each shard on its owner; with
  // expert parallelism a shard's dense part, held by the whole ep group, on ep rank 0.
  const bool sharded = stage != ZeroStage::kNone;
  const bool dense_here = sharded ? !expert_parallel() || ep_->rank() == 0 : dp_->rank() == 0;
  const bool experts_here = sharded || (expert_parallel() ? edp_->rank() == 0 : dp_->rank() == 0);
  if (dense_here || experts_here) {
    const ParamTable& table = model_->param_table();
    const int tied = tied_head_layer(options_.model);
    for (const TensorSpec& s : table.specs()) {
      if (s.layer == tied) continue;                                          // counted on the first stage
      if (!(s.expert >= 0 ? experts_here : dense_here)) continue;
      if (options_.layout.tp_size > 1 && s.tp_dim < 0 && options_.layout.tp_rank != 0) continue;  // replicated
      const size_t lo = std::max(s.offset, range.begin), hi = std::min(s.offset + s.numel, range.end);
      if (lo < hi) add_squares(owned + (lo - range.begin), hi - lo);
    }
  }
  ZT_ASSIGN_OR_RETURN(const double sq, all_reduce_sum(world_, read_squares()));
  return std::sqrt(sq);
}

// The norm, the fp16 overflow check, clipping, the update and the parameter exchange;
// true when an fp16 overflow skipped the update (on every rank: the flag is all-reduced).
StatusOr<bool> Trainer::update_parameters(const ScheduleValue& sched, StepStats* stats) {
  if (scaler_ && test_overflow_point(global_step_ + 1, world_->rank()) && states_->owned_range().size() > 0) {
    const float inf = std::numeric_limits<float>::infinity();  // the test hook
    backend_.copy_from_host(const_cast<float*>(states_->owned_grads()), &inf, sizeof(float));
  }
  ZT_ASSIGN_OR_RETURN(stats->grad_norm, global_grad_norm());
  if (scaler_) {
    ZT_ASSIGN_OR_RETURN(const int64_t overflows, all_reduce_sum(world_, int64_t{!std::isfinite(stats->grad_norm)}));
    ZT_RETURN_IF_ERROR(scaler_->update(overflows > 0));
    stats->next_loss_scale = scaler_->scale();
    if (overflows > 0) return true;  // gradients are zeroed by the next step
    stats->grad_norm /= stats->loss_scale;
  }
  StepHyper hyper;
  hyper.lr = sched.lr;
  hyper.momentum = sched.momentum;
  // The clip coefficient of the true gradients, and fp16's unscaling, in one factor.
  hyper.grad_scale = clip_coefficient(stats->grad_norm, options_.gradient_clipping) / stats->loss_scale;
  // Local gradients (a 1-bit optimizer after its warm-up) are each rank's part of the
  // sum; dp x g_r is that rank's estimate of the whole gradient.
  if (!optimizer_->engine_reduces_gradients()) hyper.grad_scale *= dp_->size();
  // The update is local (it may swap state through a disk); every rank learns whether
  // all succeeded before parameters are exchanged, so a failed disk stops every rank.
  const Status local = states_->update(*optimizer_, hyper);
  stats->host_update_s = states_->host_update_times().update_s;
  stats->copy_wait_s = states_->host_update_times().copy_wait_s;
  ZT_ASSIGN_OR_RETURN(const int64_t failed, all_reduce_sum(world_, int64_t{!local.ok()}));
  ZT_RETURN_IF_ERROR(local);
  if (failed > 0) {
    return Status::IOError("the optimizer step failed on " + std::to_string(failed) + " other rank(s); see their errors");
  }
  ZT_RETURN_IF_ERROR(states_->finish_step());
  return false;
}

// Each micro-batch's balance loss weighs coef / (micro-batches in the global batch), as
// DeepSpeed's loss / gradient_accumulation_steps averaged over data-parallel ranks.
void Trainer::begin_moe_step(double loss_scale, double micro_global) {
  model_->set_moe_aux_weight(static_cast<float>(options_.model.moe.aux_loss_coef * loss_scale / micro_global));
  moe_aux_sum_ = 0.0;
  moe_counts_.moe_expert_tokens.assign(static_cast<size_t>(options_.model.moe.num_experts), 0);
  moe_counts_.moe_dropped = 0;
}

void Trainer::note_moe_routing() {
  if (!options_.model.moe.enabled()) return;
  moe_aux_sum_ += model_->moe_aux_loss();
  for (const MoeGateResult& r : model_->moe_routing()) {
    for (size_t e = 0; e < r.counts.size(); ++e) moe_counts_.moe_expert_tokens[e] += r.counts[e];
    moe_counts_.moe_dropped += std::count(r.expert.begin(), r.expert.end(), -1);
  }
}

// The step's balance loss, summed over the pipeline's stages and the data-parallel ranks,
// and this rank's routing counts.
Status Trainer::finish_moe_step(double micro_global, StepStats* stats) {
  if (!options_.model.moe.enabled()) return Status::OK();
  ZT_ASSIGN_OR_RETURN(double aux, all_reduce_sum(pp_, moe_aux_sum_));
  ZT_ASSIGN_OR_RETURN(aux, all_reduce_sum(dp_, aux));
  stats->moe_aux_loss = aux / micro_global;
  stats->moe_expert_tokens = moe_counts_.moe_expert_tokens;
  stats->moe_dropped = moe_counts_.moe_dropped;
  return Status::OK();
}

StatusOr<StepStats> Trainer::step(const std::vector<MicroBatch>& input) {
  const int B = options_.micro_batch;
  const GptLayout& lay = options_.layout;
  if (input.empty()) return Status::InvalidArgument("a training step needs at least one micro-batch");
  if (pipelined() && static_cast<int>(input.size()) != std::max(1, options_.micro_batches)) {
    return Status::InvalidArgument("this pipeline was built for " + std::to_string(options_.micro_batches) +
                                   " micro-batches per step, got " + std::to_string(input.size()));
  }
  const int64_t local = static_cast<int64_t>(input.size());
  StepPlan plan = efficiency_.plan(input, B, options_.seq_len, global_step_, data_rank() * local, train_batch_size_of(local));
  // Sequence parallelism: this rank's positions of each sequence.
  const std::vector<MicroBatch> host_batches = sp_ == nullptr ? plan.micro_batches : slicer_.slice(plan.micro_batches, B, plan.seq_len);
  const int T = step_seq_ = options_.layout.local_seq(plan.seq_len);
  step_routes_ = std::move(plan.routes);
  int64_t local_count = 0;
  for (const MicroBatch& mb : host_batches) {
    ZT_RETURN_IF_ERROR(model_->validate_batch(lay.embedding ? mb.tokens : nullptr, mb.targets, B, T));
    for (int64_t i = 0; i < static_cast<int64_t>(B) * T; ++i) local_count += mb.targets[i] >= 0;
  }
  ZT_ASSIGN_OR_RETURN(const std::vector<MicroBatch> micro_batches, staging_->stage(host_batches, int64_t{B} * T));
  for (ProcessGroup* g : {world_, dp_, pp_, tp_, tied_}) {
    if (g != nullptr) g->set_step(global_step_ + 1);
  }
  ZT_ASSIGN_OR_RETURN(const int64_t counted, all_reduce_sum(dp_, local_count));
  StepStats stats;
  stats.loss_scale = scaler_ ? scaler_->scale() : 1.0;  // fp16: the backward runs on the scaled loss
  const float dloss = counted > 0 ? static_cast<float>(stats.loss_scale / static_cast<double>(counted)) : 0.0f;
  const double micro_global = static_cast<double>(local) * data_size();
  begin_moe_step(stats.loss_scale, micro_global);
  states_->zero_grads();
  reducer_->set_reduce(optimizer_->engine_reduces_gradients());
  const uint64_t read0 = disk_read(), written0 = disk_written();
  const size_t modules = static_cast<size_t>(options_.model.n_layer) + 2;
  layer_times_ = LayerTimes{std::vector<double>(modules, 0.0), std::vector<double>(modules, 0.0), 0.0};
  ZT_RETURN_IF_ERROR(pipelined() ? run_pipeline(micro_batches, dloss, &stats)
                                 : run_micro_batches(micro_batches, B, T, dloss, &stats));
  const double loss_sum = staged_loss_sum(micro_batches.size());
  test_kill_point(global_step_ + 1, world_->rank());
  Stopwatch sw;
  // The loss lives on the last pipeline stage (every tp rank holds it); sum it over the
  // pipeline (other stages add 0) and the data-parallel replicas.
  ZT_ASSIGN_OR_RETURN(double global_loss, all_reduce_sum(pp_, loss_sum));
  ZT_ASSIGN_OR_RETURN(global_loss, all_reduce_sum(dp_, global_loss));
  ZT_RETURN_IF_ERROR(finish_moe_step(micro_global, &stats));
  const ScheduleValue sched = schedule_.at(optimizer_->step_count() - 1);
  ZT_ASSIGN_OR_RETURN(stats.skipped, update_parameters(sched, &stats));
  if (compressor_ != nullptr) compressor_->after_step(stats.skipped);
  stats.optimizer_s = sw.seconds();
  ++global_step_;
  stats.step = global_step_;
  stats.loss = counted > 0 ? global_loss / static_cast<double>(counted) : 0.0;
  stats.lr = sched.lr;
  stats.tokens = static_cast<int64_t>(micro_batches.size()) * B * T;
  stats.disk_read_bytes = last_disk_read_ = disk_read() - read0;
  stats.disk_written_bytes = last_disk_written_ = disk_written() - written0;
  model_->clear_routes();
  return stats;
}

int64_t Trainer::train_batch_size_of(int64_t local_micro_batches) const {
  return static_cast<int64_t>(options_.micro_batch) * local_micro_batches * data_size();
}

StatusOr<double> Trainer::evaluate(const std::vector<MicroBatch>& batches) {
  const int B = options_.micro_batch, T = options_.layout.local_seq(options_.seq_len);
  step_seq_ = T;
  model_->clear_routes();
  const int N = data_size(), rank = data_rank();
  double sum = 0.0;
  int64_t count = 0;
  // This replica's share: batches rank, rank + N, ... Under ZeRO-3 and expert parallelism
  // every forward is collective, so a replica without a batch left runs a dummy forward
  // (not counted).
  const size_t per_rank = (batches.size() + static_cast<size_t>(N) - 1) / static_cast<size_t>(N);
  std::vector<MicroBatch> mine;
  std::vector<bool> real;
  for (size_t i = 0; i < per_rank; ++i) {
    const size_t idx = static_cast<size_t>(rank) + i * static_cast<size_t>(N);
    if (idx >= batches.size() && !states_->gathers_layers() && !expert_parallel()) continue;
    mine.push_back(batches[idx < batches.size() ? idx : 0]);
    real.push_back(idx < batches.size());
  }
  if (sp_ != nullptr) mine = slicer_.slice(mine, B, options_.seq_len);  // this rank's positions
  for (size_t i = 0; i < mine.size(); ++i) {
    ZT_RETURN_IF_ERROR(model_->validate_batch(options_.layout.embedding ? mine[i].tokens : nullptr, mine[i].targets, B, T));
  }
  ZT_ASSIGN_OR_RETURN(const std::vector<MicroBatch> staged, staging_->stage(mine, int64_t{B} * T));
  for (size_t i = 0; i < staged.size(); ++i) {
    if (pipelined()) {
      if (real[i] || expert_parallel()) ZT_RETURN_IF_ERROR(evaluate_pipeline(staged[i], staging_->loss_slot(i)));
    } else {
      ZT_RETURN_IF_ERROR(LayerWalk(*model_).forward(staged[i], B, T, /*with_backward=*/false, layer_source()));
      ZT_RETURN_IF_ERROR(model_->loss_into(staged[i].targets, staging_->loss_slot(i)));
    }
  }
  const std::vector<LossSum> losses = staging_->read_losses(staged.size());
  for (size_t i = 0; i < losses.size(); ++i) {
    if (!real[i]) continue;
    sum += losses[i].sum;
    count += losses[i].count;
  }
  ZT_ASSIGN_OR_RETURN(sum, all_reduce_sum(pp_, sum));
  ZT_ASSIGN_OR_RETURN(count, all_reduce_sum(pp_, count));
  ZT_ASSIGN_OR_RETURN(sum, all_reduce_sum(dp_, sum));
  ZT_ASSIGN_OR_RETURN(count, all_reduce_sum(dp_, count));
  return count > 0 ? sum / static_cast<double>(count) : 0.0;
}

Status Trainer::gather_params(float* out) { return states_->gather_params(out); }

MemoryReport Trainer::memory() const {
  MemoryReport r;
  r.param_bytes = states_->param_bytes();
  r.master_bytes = states_->master_bytes();
  r.grad_bytes = states_->grad_bytes();
  r.optimizer_bytes = states_->optimizer_bytes();
  r.bucket_bytes = reducer_->bucket_bytes() + states_->fetch_buffer_bytes();
  for (const std::vector<Arena>* pipe : {&grad_send_, &grad_recv_}) {
    for (const Arena& a : *pipe) r.bucket_bytes += a.bytes();
  }
  r.offload_buffer_bytes = states_->offload_buffer_bytes() + (stash_ ? stash_->buffer_bytes() : 0);
  r.disk_bytes = states_->disk_bytes() + (stash_ ? stash_->disk_bytes() : 0);
  r.disk_read_bytes = last_disk_read_;
  r.disk_written_bytes = last_disk_written_;
  r.activation_bytes = model_->activation_bytes();
  r.peak_rss_bytes = peak_rss_bytes();
  r.host_bytes = states_->host_bytes() + (stash_ && !backend_.host() ? stash_->buffer_bytes() : 0);
  return r;
}

}  // namespace zt
