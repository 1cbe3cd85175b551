// A worker's step: the layer walk over pulled parameters with per-bucket pushes, then the
// commit; see ps_worker.h.
#include "parallel/param_server/ps_worker.h"

#include <chrono>
#include <thread>

#include "core/timer.h"
#include "optim/grad_clip.h"
#include "parallel/param_server/ps_wait.h"

namespace zt {

PsWorker::PsWorker(const PsModelOptions& model, const PsOptions& options, const PsLayout& layout, ProcessGroup* ps,
                   ProcessGroup* workers)
    : model_opts_(model),
      options_(options),
      mode_(options.effective_mode()),
      layout_(layout),
      workers_(workers),
      rank_(ps->rank()),
      index_(layout.worker_index(ps->rank())),
      link_(ps, layout.servers(), options.deadline_s) {}

PsWorker::~PsWorker() = default;

StatusOr<std::unique_ptr<PsWorker>> PsWorker::create(const PsModelOptions& model, const PsOptions& options,
                                                     const PsLayout& layout, ProcessGroup* ps, ProcessGroup* workers) {
  ZT_CHECK(!layout.is_server(ps->rank()), "rank %d is not a worker", ps->rank());
  ZT_RETURN_IF_ERROR(model.model.validate());
  if (model.micro_batch <= 0 || model.grad_accum <= 0) {
    return Status::InvalidArgument("micro batch size and accumulation steps must be positive");
  }
  if (model.seq_len <= 0 || model.seq_len > model.model.n_positions) {
    return Status::InvalidArgument("sequence length " + std::to_string(model.seq_len) + " must be in [1, n_positions=" +
                                   std::to_string(model.model.n_positions) + "]");
  }
  const Backend& backend = backend_or_cpu(model.backend);
  if (backend.compute_dtype() == DType::kF16) {
    return Status::Unimplemented("fp16 with the parameter server is not supported yet: skipping a step on an "
                                 "overflow needs every server to agree; use bf16");
  }
  std::unique_ptr<PsWorker> w(new PsWorker(model, options, layout, ps, workers));
  for (ProcessGroup* g : {ps, workers}) {  // they move this backend's arenas (comm/memory_domain.h)
    if (g != nullptr) g->set_memory_domain(backend.memory_domain());
  }
  GptModelOptions mo;
  mo.backend = &backend;
  mo.max_batch = model.micro_batch;
  mo.max_seq = model.seq_len;
  w->model_ = GptModel::create(model.model, mo);
  const ParamTable& table = w->model_->param_table();
  ZT_ASSIGN_OR_RETURN(w->params_, PsPulledParams::create(backend, table, layout, &w->link_, &w->stats_, model.seed));
  ZT_ASSIGN_OR_RETURN(w->grads_, PsPushedGrads::create(backend, table, layout, &w->link_, &w->stats_));
  return w;
}

StatusOr<int64_t> PsWorker::next_unit() {
  if (stopped_) return kNoUnit;
  if (!started_) {  // the first step: the initial parameters everyone derives from the seed
    started_ = true;
    start_time_ = now_seconds();
    unit_ = index_;
    return unit_;
  }
  // Server 0's reply header hands out the next unit; the parameters are waited for lazily.
  ZT_RETURN_IF_ERROR(params_->receive_header(0));
  unit_ = params_->header(0).next_unit;
  if (unit_ != kNoUnit) return unit_;
  // No more work: tell every server, so none waits for this worker again.
  ZT_RETURN_IF_ERROR(link_.wait_sends(local_step_));
  stopped_ = true;
  params_->send_done();
  link_.note_finished();
  return kNoUnit;
}

StatusOr<int64_t> PsWorker::check_batches(const std::vector<MicroBatch>& micro_batches) const {
  const int B = model_opts_.micro_batch, T = model_opts_.seq_len;
  if (micro_batches.size() != static_cast<size_t>(model_opts_.grad_accum)) {
    return Status::InvalidArgument("a parameter-server step takes " + std::to_string(model_opts_.grad_accum) +
                                   " micro-batches, got " + std::to_string(micro_batches.size()));
  }
  int64_t local = 0;
  for (const MicroBatch& mb : micro_batches) {
    ZT_RETURN_IF_ERROR(model_->validate_batch(mb.tokens, mb.targets, B, T));
    for (int64_t i = 0; i < static_cast<int64_t>(B) * T; ++i) local += mb.targets[i] >= 0;
  }
  return local;
}

Status PsWorker::run_micro_batches(const std::vector<MicroBatch>& micro_batches, const WorkHandle& count_work,
                                   double* loss_sum, PsWorkerStep* out) {
  const int B = model_opts_.micro_batch, T = model_opts_.seq_len;
  LayerWalk walk(*model_);
  float dloss = 0.0f;
  for (size_t m = 0; m < micro_batches.size(); ++m) {
    const MicroBatch& mb = micro_batches[m];
    Stopwatch sw;
    ZT_RETURN_IF_ERROR(walk.forward(mb, B, T, /*with_backward=*/true, *params_));
    ZT_ASSIGN_OR_RETURN(const LossSum l, model_->loss(mb.targets));
    *loss_sum += l.sum;
    out->forward_s += sw.seconds();
    sw.restart();
    if (m == 0) {
      if (count_work) {
        ZT_RETURN_IF_ERROR(link_.wait(count_work, -1, [&](double e) {
          return "worker rank " + std::to_string(rank_) + ": the workers' token count for step " +
                 std::to_string(local_step_ + 1) + " did not complete within " + format_seconds(e) +
                 " (1.5 x the deadline): another worker is stopped or hung; stopping the job";
        }));
      }
      dloss = count_ > 0 ? static_cast<float>(1.0 / static_cast<double>(count_)) : 0.0f;
    }
    grads_->begin_micro(m + 1 == micro_batches.size());  // the last micro-batch pushes its buckets
    ZT_RETURN_IF_ERROR(walk.backward(mb, dloss, *params_, *grads_));
    ZT_RETURN_IF_ERROR(grads_->end_micro());
    out->backward_s += sw.seconds();
  }
  return Status::OK();
}

Status PsWorker::commit_step(double loss_sum, int64_t local) {
  for (int s = 0; s < layout_.servers(); ++s) {  // (the forward has taken every slice in)
    ZT_RETURN_IF_ERROR(params_->receive_server(s));
    params_->send_step_header(s);
  }
  const Arena& g = grads_->arena();
  commit_.loss_sum = loss_sum;
  commit_.sumsq = mode_ == PsMode::kSync ? 0.0 : sum_of_squares(g.data(), g.size(), model_backend().ops());
  commit_.counted = local;
  for (int s = 0; s < layout_.servers(); ++s) link_.send(s, &commit_, sizeof(PushCommit), kTagCommit);
  params_->post_pulls();
  return Status::OK();
}

void PsWorker::slow_down() {
  if (rank_ != options_.slow_worker_rank || options_.slow_worker_delay_ms <= 0.0) return;
  Stopwatch sw;
  std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(options_.slow_worker_delay_ms));
  stats_.slow_s += sw.seconds();
}

StatusOr<PsWorkerStep> PsWorker::step(const std::vector<MicroBatch>& micro_batches) {
  ZT_CHECK(started_ && !stopped_ && unit_ != kNoUnit, "PsWorker::step without a unit from next_unit()");
  const int B = model_opts_.micro_batch, T = model_opts_.seq_len;
  ZT_ASSIGN_OR_RETURN(const int64_t local, check_batches(micro_batches));
  link_.group().set_step(local_step_ + 1);
  slow_down();
  // Synchronous mode normalises by the global batch's token count, as the engine does. The
  // count's all-reduce runs while the first forward goes on (which also sends the step
  // headers: a server then tells a worker stuck here from the stopped one it waits for).
  count_ = local;
  WorkHandle count_work;
  if (mode_ == PsMode::kSync && workers_->size() > 1) {
    workers_->set_step(local_step_ + 1);
    count_work = workers_->all_reduce(&count_, 1, CommDType::kI64);
  }
  ZT_RETURN_IF_ERROR(link_.wait_sends(local_step_));  // the last step's pushes read the gradients
  grads_->begin_step();
  params_->begin_step(unit_, local_step_);
  PsWorkerStep out;
  const double wait_before = stats_.pull_wait_s;
  double loss_sum = 0.0;
  ZT_RETURN_IF_ERROR(run_micro_batches(micro_batches, count_work, &loss_sum, &out));
  ZT_RETURN_IF_ERROR(commit_step(loss_sum, local));
  local_step_ += 1;
  stats_.units += 1;
  stats_.tokens += static_cast<int64_t>(micro_batches.size()) * B * T;
  stats_.compute_s += out.forward_s + out.backward_s - (stats_.pull_wait_s - wait_before);
  out.unit = unit_;
  out.local_step = local_step_;
  out.loss = local > 0 ? loss_sum / static_cast<double>(local) : 0.0;
  out.tokens = static_cast<int64_t>(micro_batches.size()) * B * T;
  out.pull_wait_s = stats_.pull_wait_s - wait_before;
  out.server0 = params_->server0();
  return out;
}

Status PsWorker::finish() {
  ZT_CHECK(stopped_, "PsWorker::finish before next_unit() returned kNoUnit");
  if (finished_) return Status::OK();
  for (int s = 0; s < layout_.servers(); ++s) ZT_RETURN_IF_ERROR(params_->receive_server(s));  // replies to the last push
  params_->post_pulls();
  for (int s = 0; s < layout_.servers(); ++s) {
    ZT_RETURN_IF_ERROR(params_->receive_server(s));
    if (params_->header(s).kind != kPullFinal) {
      return Status::Internal("worker rank " + std::to_string(rank_) + ": parameter server rank " + std::to_string(s) +
                              " sent kind " + std::to_string(params_->header(s).kind) +
                              " where the final parameters were due");
    }
  }
  ZT_RETURN_IF_ERROR(link_.wait_sends(local_step_));
  ZT_RETURN_IF_ERROR(link_.wait_notes());
  finished_ = true;
  params_->complete();  // evaluate() runs on the final parameters
  stats_.wall_s = now_seconds() - start_time_;
  return Status::OK();
}

StatusOr<double> PsWorker::evaluate(const std::vector<MicroBatch>& batches) {
  ZT_CHECK(finished_, "PsWorker::evaluate before finish()");
  const int B = model_opts_.micro_batch, T = model_opts_.seq_len;
  const size_t W = static_cast<size_t>(workers_->size());
  LayerWalk walk(*model_);
  double sum = 0.0;
  int64_t count = 0;
  for (size_t i = static_cast<size_t>(workers_->rank()); i < batches.size(); i += W) {
    ZT_RETURN_IF_ERROR(model_->validate_batch(batches[i].tokens, batches[i].targets, B, T));
    ZT_RETURN_IF_ERROR(walk.forward(batches[i], B, T, /*with_backward=*/false, *params_));
    ZT_ASSIGN_OR_RETURN(const LossSum l, model_->loss(batches[i].targets));
    sum += l.sum;
    count += l.count;
  }
  auto what = [&](double e) {
    return "worker rank " + std::to_string(rank_) + ": the workers' validation sums did not complete within " +
           format_seconds(e) + "; stopping the job";
  };
  ZT_RETURN_IF_ERROR(link_.wait(workers_->all_reduce(&sum, 1, CommDType::kF64), -1, what));
  ZT_RETURN_IF_ERROR(link_.wait(workers_->all_reduce(&count, 1, CommDType::kI64), -1, what));
  return count > 0 ? sum / static_cast<double>(count) : 0.0;
}

}  // namespace zt
