// The single-process training step.
#include "engine/trainer.h"

#include "core/memory_stats.h"
#include "core/timer.h"
#include "optim/grad_clip.h"

namespace zt {

Trainer::Trainer(const TrainerOptions& options) : options_(options), schedule_(options.schedule) {}

StatusOr<std::unique_ptr<Trainer>> Trainer::create(const TrainerOptions& options) {
  ZT_RETURN_IF_ERROR(options.model.validate());
  if (options.micro_batch <= 0) {
    return Status::InvalidArgument("micro batch size must be positive, got " + std::to_string(options.micro_batch));
  }
  if (options.seq_len <= 0 || options.seq_len > options.model.n_positions) {
    return Status::InvalidArgument("sequence length " + std::to_string(options.seq_len) + " must be in [1, n_positions=" +
                                   std::to_string(options.model.n_positions) + "]");
  }
  std::unique_ptr<Trainer> t(new Trainer(options));
  t->model_ = std::make_unique<GptModel>(options.model, options.micro_batch, options.seq_len);
  const ParamTable& table = t->model_->param_table();
  t->params_ = FloatBuffer(table.numel());
  t->grads_ = FloatBuffer(table.numel());
  init_params(table, t->params_.data(), options.seed);
  t->model_->bind(t->params_.data(), t->grads_.data());
  const ElementRange all{0, table.numel()};
  if (options.optimizer == OptimizerKind::kAdamW) {
    t->optimizer_ = std::make_unique<AdamW>(table, all, options.adamw);
  } else {
    t->optimizer_ = std::make_unique<Sgd>(table, all, options.sgd);
  }
  return t;
}

static int64_t count_targets(const std::vector<MicroBatch>& mbs, int64_t per_mb) {
  int64_t n = 0;
  for (const MicroBatch& mb : mbs) {
    for (int64_t i = 0; i < per_mb; ++i) n += mb.targets[i] >= 0;
  }
  return n;
}

StatusOr<StepStats> Trainer::step(const std::vector<MicroBatch>& micro_batches) {
  const int B = options_.micro_batch, T = options_.seq_len;
  if (micro_batches.empty()) return Status::InvalidArgument("a training step needs at least one micro-batch");
  for (const MicroBatch& mb : micro_batches) ZT_RETURN_IF_ERROR(model_->validate_batch(mb.tokens, mb.targets, B, T));
  const int64_t counted = count_targets(micro_batches, static_cast<int64_t>(B) * T);
  StepStats stats;
  const float dloss = counted > 0 ? static_cast<float>(1.0 / static_cast<double>(counted)) : 0.0f;
  grads_.zero();
  double loss_sum = 0.0;
  for (const MicroBatch& mb : micro_batches) {
    Stopwatch sw;
    model_->forward(mb.tokens, B, T);
    loss_sum += model_->loss(mb.targets).sum;
    stats.forward_s += sw.seconds();
    sw.restart();
    model_->backward(mb.tokens, mb.targets, dloss);
    stats.backward_s += sw.seconds();
  }
  Stopwatch sw;
  stats.grad_norm = l2_norm(grads_.data(), grads_.size());
  const ScheduleValue sched = schedule_.at(global_step_ - 1);
  StepHyper hyper;
  hyper.lr = sched.lr;
  hyper.momentum = sched.momentum;
  hyper.grad_scale = clip_coefficient(stats.grad_norm, options_.gradient_clipping);
  optimizer_->step(params_.data(), grads_.data(), hyper);
  stats.optimizer_s = sw.seconds();
  ++global_step_;
  stats.step = global_step_;
  stats.loss = counted > 0 ? loss_sum / static_cast<double>(counted) : 0.0;
  stats.lr = sched.lr;
  stats.tokens = static_cast<int64_t>(micro_batches.size()) * B * T;
  return stats;
}

StatusOr<double> Trainer::evaluate(const std::vector<MicroBatch>& micro_batches) {
  const int B = options_.micro_batch, T = options_.seq_len;
  double sum = 0.0;
  int64_t count = 0;
  for (const MicroBatch& mb : micro_batches) {
    ZT_RETURN_IF_ERROR(model_->validate_batch(mb.tokens, mb.targets, B, T));
    model_->forward(mb.tokens, B, T);
    const LossSum l = model_->loss(mb.targets);
    sum += l.sum;
    count += l.count;
  }
  return count > 0 ? sum / static_cast<double>(count) : 0.0;
}

MemoryReport Trainer::memory() const {
  MemoryReport r;
  r.param_bytes = params_.bytes();
  r.grad_bytes = grads_.bytes();
  r.optimizer_bytes = optimizer_->state_bytes();
  r.activation_bytes = model_->activation_bytes();
  r.peak_rss_bytes = peak_rss_bytes();
  return r;
}

}  // namespace zt
