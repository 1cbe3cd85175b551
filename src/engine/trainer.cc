// The training step on one data-parallel rank; see trainer.h.
#include "engine/trainer.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/memory_stats.h"
#include "core/timer.h"
#include "optim/grad_clip.h"

namespace zt {

Trainer::Trainer(const TrainerOptions& options, ProcessGroup* dp)
    : options_(options),
      dp_(dp),
      partition_(build_gpt_param_table(options.model).numel(), dp->size()),
      schedule_(options.schedule) {}

Trainer::~Trainer() = default;

StatusOr<std::unique_ptr<Trainer>> Trainer::create(const TrainerOptions& options, ProcessGroup* dp) {
  ZT_RETURN_IF_ERROR(options.model.validate());
  if (options.micro_batch <= 0) {
    return Status::InvalidArgument("micro batch size must be positive, got " + std::to_string(options.micro_batch));
  }
  if (options.seq_len <= 0 || options.seq_len > options.model.n_positions) {
    return Status::InvalidArgument("sequence length " + std::to_string(options.seq_len) + " must be in [1, n_positions=" +
                                   std::to_string(options.model.n_positions) + "]");
  }
  std::unique_ptr<ProcessGroup> own;
  if (dp == nullptr) {
    own = make_single_process_group();
    dp = own.get();
  }
  std::unique_ptr<Trainer> t(new Trainer(options, dp));
  t->own_group_ = std::move(own);
  t->model_ = std::make_unique<GptModel>(options.model, options.micro_batch, options.seq_len);
  ZT_RETURN_IF_ERROR(t->init_states());
  return t;
}

Status Trainer::init_states() {
  const ParamTable& table = model_->param_table();
  const ZeroStage stage = options_.zero.stage;
  const ElementRange shard = partition_.shard(dp_->rank());
  const ElementRange all{0, table.numel()};
  if (shards_parameters(stage)) {
    ZT_ASSIGN_OR_RETURN(param_shard_, FloatBuffer::allocate(shard.size(), "the parameter shard"));
    init_params_range(table, shard, param_shard_.data(), options_.seed);
  } else {
    ZT_ASSIGN_OR_RETURN(params_, FloatBuffer::allocate(table.numel(), "the parameters"));
    init_params(table, params_.data(), options_.seed);
  }
  if (shards_gradients(stage)) {
    ZT_ASSIGN_OR_RETURN(grad_shard_, FloatBuffer::allocate(shard.size(), "the gradient shard"));
  } else {
    ZT_ASSIGN_OR_RETURN(grads_, FloatBuffer::allocate(table.numel(), "the gradients"));
  }
  const ElementRange opt_range = shards_optimizer(stage) ? shard : all;
  if (options_.optimizer == OptimizerKind::kAdamW) {
    ZT_ASSIGN_OR_RETURN(optimizer_, AdamW::create(table, opt_range, options_.adamw));
  } else {
    optimizer_ = std::make_unique<Sgd>(table, opt_range, options_.sgd);
  }
  const int L = options_.model.n_layer;
  GradReducerOptions ro{stage, options_.zero.reduce_bucket_elems, options_.zero.overlap_comm};
  reducer_ = std::make_unique<GradReducer>(table, partition_, dp_, ro, L, grads_.empty() ? nullptr : grads_.data(),
                                           grad_shard_.empty() ? nullptr : grad_shard_.data());
  if (shards_parameters(stage)) {
    ParamFetcherOptions fo{options_.zero.prefetch_elems, options_.zero.persistence_threshold};
    fetcher_ = std::make_unique<ParamFetcher>(table, partition_, dp_, param_shard_.data(), L, fo);
    ZT_RETURN_IF_ERROR(fetcher_->refresh_persistent());
  } else {
    model_->bind(params_.data(), grads_.empty() ? nullptr : grads_.data());
  }
  return Status::OK();
}

StatusOr<float*> Trainer::layer_params(int layer) {
  if (!fetcher_) return params_.data() + model_->param_table().layer_range(layer).begin;
  if (fetcher_->persistent(layer)) return fetcher_->persistent_params(layer);
  return fetcher_->acquire(layer);
}

void Trainer::drop_layer_params(int layer) {
  if (fetcher_ && !fetcher_->persistent(layer)) fetcher_->release(layer);
}

Status Trainer::forward_pass(const MicroBatch& mb, bool with_backward) {
  GptModel& m = *model_;
  const int L = options_.model.n_layer;
  if (fetcher_) fetcher_->begin_micro(with_backward);
  ZT_ASSIGN_OR_RETURN(float* emb, layer_params(kEmbeddingLayer));
  m.bind_layer(kEmbeddingLayer, emb, nullptr);
  m.forward_embedding(mb.tokens, options_.micro_batch, options_.seq_len);
  drop_layer_params(kEmbeddingLayer);
  for (int l = 0; l < L; ++l) {
    ZT_ASSIGN_OR_RETURN(float* p, layer_params(l));
    m.bind_layer(l, p, nullptr);
    m.forward_block(l);
    drop_layer_params(l);
  }
  ZT_ASSIGN_OR_RETURN(float* lnf, layer_params(L));
  m.bind_layer(L, lnf, nullptr);
  ZT_ASSIGN_OR_RETURN(float* head, layer_params(kEmbeddingLayer));  // the tied LM head
  m.bind_layer(kEmbeddingLayer, head, nullptr);
  m.forward_head();
  if (!with_backward) {  // otherwise ln_f and the head stay held for backward_head
    drop_layer_params(L);
    drop_layer_params(kEmbeddingLayer);
  }
  return Status::OK();
}

// Runs after forward_pass(with_backward = true), with the LM head still bound.
Status Trainer::backward_pass(const MicroBatch& mb, float dloss) {
  GptModel& m = *model_;
  const int L = options_.model.n_layer;
  float* g_lnf = reducer_->acquire_layer(L);
  float* g_emb = reducer_->acquire_layer(kEmbeddingLayer);
  // ln_f's and the head's parameters are the ones forward_pass bound (under ZeRO-3 still held).
  m.bind_layer(L, m.bound_params(L), g_lnf);
  m.bind_layer(kEmbeddingLayer, m.bound_params(kEmbeddingLayer), g_emb);
  m.backward_head(mb.targets, dloss);
  reducer_->layer_done(L);
  drop_layer_params(L);
  drop_layer_params(kEmbeddingLayer);
  for (int l = L - 1; l >= 0; --l) {
    ZT_ASSIGN_OR_RETURN(float* p, layer_params(l));
    m.bind_layer(l, p, reducer_->acquire_layer(l));
    m.backward_block(l);
    reducer_->layer_done(l);
    drop_layer_params(l);
  }
  m.bind_layer(kEmbeddingLayer, nullptr, g_emb);  // the embedding backward needs no parameters
  m.backward_embedding(mb.tokens);
  reducer_->layer_done(kEmbeddingLayer);
  return reducer_->end_micro();
}

StatusOr<double> Trainer::all_reduce_sum(double value) {
  ZT_RETURN_IF_ERROR(dp_->all_reduce(&value, 1, CommDType::kF64)->wait());
  return value;
}

StatusOr<int64_t> Trainer::all_reduce_sum(int64_t value) {
  ZT_RETURN_IF_ERROR(dp_->all_reduce(&value, 1, CommDType::kI64)->wait());
  return value;
}

StatusOr<StepStats> Trainer::step(const std::vector<MicroBatch>& micro_batches) {
  const int B = options_.micro_batch, T = options_.seq_len;
  const ZeroStage stage = options_.zero.stage;
  if (micro_batches.empty()) return Status::InvalidArgument("a training step needs at least one micro-batch");
  int64_t local_count = 0;
  for (const MicroBatch& mb : micro_batches) {
    ZT_RETURN_IF_ERROR(model_->validate_batch(mb.tokens, mb.targets, B, T));
    for (int64_t i = 0; i < static_cast<int64_t>(B) * T; ++i) local_count += mb.targets[i] >= 0;
  }
  dp_->set_step(global_step_ + 1);
  ZT_ASSIGN_OR_RETURN(const int64_t counted, all_reduce_sum(local_count));
  const float dloss = counted > 0 ? static_cast<float>(1.0 / static_cast<double>(counted)) : 0.0f;
  if (!grads_.empty()) grads_.zero();
  if (!grad_shard_.empty()) grad_shard_.zero();
  StepStats stats;
  double loss_sum = 0.0;
  for (size_t i = 0; i < micro_batches.size(); ++i) {
    const MicroBatch& mb = micro_batches[i];
    reducer_->begin_micro(i + 1 == micro_batches.size());
    Stopwatch sw;
    ZT_RETURN_IF_ERROR(forward_pass(mb, /*with_backward=*/true));
    loss_sum += model_->loss(mb.targets).sum;
    stats.forward_s += sw.seconds();
    sw.restart();
    ZT_RETURN_IF_ERROR(backward_pass(mb, dloss));
    stats.backward_s += sw.seconds();
  }
  Stopwatch sw;
  ZT_ASSIGN_OR_RETURN(const double global_loss, all_reduce_sum(loss_sum));
  // The gradients this rank owns after reduction: all of them (stage 0), or its shard.
  const ElementRange range = optimizer_->range();
  const float* owned_grads = !grad_shard_.empty() ? grad_shard_.data() : grads_.data() + range.begin;
  float* owned_params = shards_parameters(stage) ? param_shard_.data() : params_.data() + range.begin;
  if (stage == ZeroStage::kNone) {
    stats.grad_norm = l2_norm(grads_.data(), grads_.size());  // every rank holds the same reduced sums
  } else {
    ZT_ASSIGN_OR_RETURN(const double sq, all_reduce_sum(sum_of_squares(owned_grads, range.size())));
    stats.grad_norm = std::sqrt(sq);
  }
  const ScheduleValue sched = schedule_.at(global_step_ - 1);
  StepHyper hyper;
  hyper.lr = sched.lr;
  hyper.momentum = sched.momentum;
  hyper.grad_scale = clip_coefficient(stats.grad_norm, options_.gradient_clipping);
  optimizer_->step(owned_params, owned_grads, hyper);
  if (shards_optimizer(stage) && !shards_parameters(stage)) {
    // Stages 1-2: every rank updated its shard; all-gather the parameters in buckets.
    std::vector<WorkHandle> works;
    const size_t chunk = std::max<size_t>(1, options_.zero.allgather_bucket_elems);
    for (size_t a = 0; a < params_.size(); a += chunk) {
      const ElementRange r{a, std::min(params_.size(), a + chunk)};
      works.push_back(dp_->all_gather(params_.data() + a, partition_.counts(r)));
    }
    for (WorkHandle& w : works) ZT_RETURN_IF_ERROR(w->wait());
  } else if (fetcher_) {
    ZT_RETURN_IF_ERROR(fetcher_->refresh_persistent());
  }
  stats.optimizer_s = sw.seconds();
  ++global_step_;
  stats.step = global_step_;
  stats.loss = counted > 0 ? global_loss / static_cast<double>(counted) : 0.0;
  stats.lr = sched.lr;
  stats.tokens = static_cast<int64_t>(micro_batches.size()) * B * T;
  return stats;
}

StatusOr<double> Trainer::evaluate(const std::vector<MicroBatch>& batches) {
  const int B = options_.micro_batch, T = options_.seq_len;
  const int N = dp_->size(), rank = dp_->rank();
  double sum = 0.0;
  int64_t count = 0;
  const size_t per_rank = (batches.size() + static_cast<size_t>(N) - 1) / static_cast<size_t>(N);
  for (size_t i = 0; i < per_rank; ++i) {
    const size_t idx = static_cast<size_t>(rank) + i * static_cast<size_t>(N);
    const bool real = idx < batches.size();
    // Under ZeRO-3 every forward is collective: a rank without a batch left runs a dummy
    // forward (not counted) so that all ranks issue the same gathers.
    if (!real && !fetcher_) continue;
    const MicroBatch& mb = batches[real ? idx : 0];
    ZT_RETURN_IF_ERROR(model_->validate_batch(mb.tokens, mb.targets, B, T));
    ZT_RETURN_IF_ERROR(forward_pass(mb, /*with_backward=*/false));
    const LossSum l = model_->loss(mb.targets);
    if (!real) continue;
    sum += l.sum;
    count += l.count;
  }
  ZT_ASSIGN_OR_RETURN(sum, all_reduce_sum(sum));
  ZT_ASSIGN_OR_RETURN(count, all_reduce_sum(count));
  return count > 0 ? sum / static_cast<double>(count) : 0.0;
}

Status Trainer::gather_params(float* out) {
  if (!params_.empty()) {
    std::memcpy(out, params_.data(), params_.bytes());
    return Status::OK();
  }
  const ElementRange shard = partition_.shard(dp_->rank());
  std::memcpy(out + shard.begin, param_shard_.data(), param_shard_.bytes());
  return dp_->all_gather(out, partition_.counts({0, partition_.numel()}))->wait();
}

void Trainer::set_params(const float* full) {
  if (!params_.empty()) {
    std::memcpy(params_.data(), full, params_.bytes());
    return;
  }
  const ElementRange shard = partition_.shard(dp_->rank());
  std::memcpy(param_shard_.data(), full + shard.begin, param_shard_.bytes());
  const Status s = fetcher_->refresh_persistent();
  ZT_CHECK(s.ok(), "refreshing persistent layers failed: %s", s.to_string().c_str());
}

MemoryReport Trainer::memory() const {
  MemoryReport r;
  r.param_bytes = params_.bytes() + param_shard_.bytes();
  r.grad_bytes = grads_.bytes() + grad_shard_.bytes();
  r.optimizer_bytes = optimizer_->state_bytes();
  r.bucket_bytes = reducer_->bucket_bytes() + (fetcher_ ? fetcher_->buffer_bytes() : 0);
  r.activation_bytes = model_->activation_bytes();
  r.peak_rss_bytes = peak_rss_bytes();
  return r;
}

}  // namespace zt
