// A worker's step: lazy pulls, forward/backward with per-bucket pushes, commit; see ps_worker.h.
#include "parallel/param_server/ps_worker.h"

#include <chrono>
#include <thread>

#include "core/timer.h"
#include "nn/gpt_params.h"
#include "optim/grad_clip.h"
#include "parallel/param_server/ps_wait.h"

namespace zt {

PsWorker::PsWorker(const PsModelOptions& model, const PsOptions& options, const PsLayout& layout, ProcessGroup* ps,
                   ProcessGroup* workers)
    : model_opts_(model),
      options_(options),
      mode_(options.effective_mode()),
      layout_(layout),
      ps_(ps),
      workers_(workers),
      rank_(ps->rank()),
      index_(layout.worker_index(ps->rank())) {}

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
  std::unique_ptr<PsWorker> w(new PsWorker(model, options, layout, ps, workers));
  const Backend& backend = backend_or_cpu(model.backend);
  for (ProcessGroup* g : {ps, workers}) {  // they move this backend's arenas (comm/memory_domain.h)
    if (g != nullptr) g->set_memory_domain(backend.memory_domain());
  }
  GptModelOptions mo;
  mo.backend = &backend;
  mo.max_batch = model.micro_batch;
  mo.max_seq = model.seq_len;
  w->model_ = GptModel::create(model.model, mo);
  const ParamTable& table = w->model_->param_table();
  ZT_ASSIGN_OR_RETURN(w->params_, backend.allocate(table.numel(), DType::kF32, "the worker's parameters"));
  ZT_ASSIGN_OR_RETURN(w->grads_, backend.allocate(table.numel(), DType::kF32, "the worker's gradients"));
  init_params_into(backend, table, {0, table.numel()}, w->params_.data(), model.seed);  // the servers' values too
  if (backend.compute_dtype() == DType::kF16) {
    return Status::Unimplemented("fp16 with the parameter server is not supported yet: skipping a step on an "
                                 "overflow needs every server to agree; use bf16");
  }
  if (backend.compute_dtype() != DType::kF32) {  // bf16: the model reads a 16-bit copy of the pulled fp32 values
    ZT_ASSIGN_OR_RETURN(w->compute_, backend.allocate(table.numel(), backend.compute_dtype(), "the worker's 16-bit copy"));
  }
  w->model_->bind(w->compute_.empty() ? static_cast<void*>(w->params_.data()) : w->compute_.as<void>(),
                  w->grads_.data());
  const size_t S = static_cast<size_t>(layout.servers());
  w->pulls_.resize(S);
  for (int s = 0; s < layout.servers(); ++s) {
    w->pulls_[static_cast<size_t>(s)].slice_in.assign(layout.reply_slices(s).size(), true);  // the initial values
  }
  w->header_sent_.assign(S, false);
  w->read_version_.assign(S, 0);
  w->read_clock_.assign(S, 0);
  w->step_header_.resize(S);
  return w;
}

Status PsWorker::wait(const WorkHandle& work, int server, const std::function<std::string(double)>& what) {
  const double start = now_seconds();
  bool noted = false;
  Backoff backoff;
  while (!work->completed()) {
    const double elapsed = now_seconds() - start;
    if (elapsed > 1.5 * options_.deadline_s) return Status::DeadlineExceeded(what(elapsed));
    if (!noted && server >= 0 && !stopped_ && elapsed > 0.25 * options_.deadline_s) {
      note_blocked(server);
      noted = true;
    }
    backoff.pause();
  }
  return work->wait();
}

void PsWorker::note_blocked(int server) {
  for (int s = 0; s < layout_.servers(); ++s) {
    if (s == server) continue;
    notes_.push_back(PsNote{kNoteBlocked, server});
    note_works_.push_back(ps_->send(&notes_.back(), sizeof(PsNote), s, kTagNote));
  }
}

Status PsWorker::wait_sends() {
  for (const auto& [s, w] : sends_) {
    ZT_RETURN_IF_ERROR(wait(w, s, [&, s = s](double e) {
      return "worker rank " + std::to_string(rank_) + ": parameter server rank " + std::to_string(s) +
             " did not take the messages of this worker's step " + std::to_string(local_step_) + " within " +
             format_seconds(e) + " (1.5 x the deadline): the server is stopped or hung; stopping the job";
    }));
  }
  sends_.clear();
  return Status::OK();
}

Status PsWorker::receive_header(int s) {
  Pull& p = pulls_[static_cast<size_t>(s)];
  if (p.header_in) return Status::OK();
  Stopwatch sw;
  ZT_RETURN_IF_ERROR(wait(p.header_work, s, [&](double e) {
    return "worker rank " + std::to_string(rank_) + ": parameter server rank " + std::to_string(s) +
           " sent no reply to this worker's step " + std::to_string(local_step_) + " within " + format_seconds(e) +
           " (1.5 x the deadline): the server is stopped or hung, or waits for a stopped worker; stopping the job";
  }));
  p.header_in = true;
  read_version_[static_cast<size_t>(s)] = p.header.version;
  read_clock_[static_cast<size_t>(s)] = p.header.clock;
  if (s == 0) server0_ = p.header;
  stats_.pull_wait_s += sw.seconds();
  return Status::OK();
}

Status PsWorker::receive_range(int s, ElementRange range) {
  ZT_RETURN_IF_ERROR(receive_header(s));
  Pull& p = pulls_[static_cast<size_t>(s)];
  const std::vector<ElementRange>& slices = layout_.reply_slices(s);
  Stopwatch sw;
  for (size_t k = 0; k < slices.size(); ++k) {
    if (p.slice_in[k] || slices[k].end <= range.begin || slices[k].begin >= range.end) continue;
    ZT_RETURN_IF_ERROR(wait(p.slices[k], s, [&](double e) {
      return "worker rank " + std::to_string(rank_) + ": parameter server rank " + std::to_string(s) +
             " did not finish sending its parameters within " + format_seconds(e) +
             " (1.5 x the deadline): the server is stopped or hung; stopping the job";
    }));
    p.slice_in[k] = true;
    stats_.pull_bytes += static_cast<int64_t>(slices[k].size() * sizeof(float));
  }
  stats_.pull_wait_s += sw.seconds();
  return Status::OK();
}

Status PsWorker::receive_pull(int s) { return receive_range(s, layout_.shard(s)); }

void PsWorker::send_step_header(int s) {
  const size_t i = static_cast<size_t>(s);
  if (header_sent_[i]) return;
  step_header_[i] = StepHeader{kStepPush, unit_, read_version_[i], read_clock_[i]};
  sends_.emplace_back(s, ps_->send(&step_header_[i], sizeof(StepHeader), s, kTagStepHeader));
  header_sent_[i] = true;
}

Status PsWorker::ensure_layer(int layer) {
  const ElementRange range = layout_.layer_range(layer);
  int first = 0, last = 0;
  layout_.servers_of(range, &first, &last);
  for (int s = first; s <= last; ++s) {
    ZT_RETURN_IF_ERROR(receive_header(s));
    send_step_header(s);  // the server can post this step's receives while we compute
    ZT_RETURN_IF_ERROR(receive_range(s, range));
  }
  publish(range);
  return Status::OK();
}

void PsWorker::publish(ElementRange range) {
  if (compute_.empty()) return;
  model_backend().half_ops()->from_f32(compute_.as<half_t>() + range.begin, params_.data() + range.begin,
                                       static_cast<int64_t>(range.size()));
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
  ZT_RETURN_IF_ERROR(receive_header(0));
  unit_ = pulls_[0].header.next_unit;
  if (unit_ != kNoUnit) return unit_;
  // No more work: tell every server, so none waits for this worker again.
  ZT_RETURN_IF_ERROR(wait_sends());
  stopped_ = true;  // no notes from here on: the last one follows
  for (int s = 0; s < layout_.servers(); ++s) {
    step_header_[static_cast<size_t>(s)] = StepHeader{kStepDone, kNoUnit, 0, 0};
    sends_.emplace_back(s, ps_->send(&step_header_[static_cast<size_t>(s)], sizeof(StepHeader), s, kTagStepHeader));
    notes_.push_back(PsNote{kNoteFinished, -1});
    note_works_.push_back(ps_->send(&notes_.back(), sizeof(PsNote), s, kTagNote));
  }
  return kNoUnit;
}

Status PsWorker::forward_micro(const MicroBatch& mb, bool first, double* loss_sum) {
  GptModel& m = *model_;
  const int L = model_opts_.model.n_layer;
  if (first) ZT_RETURN_IF_ERROR(ensure_layer(kEmbeddingLayer));
  ZT_RETURN_IF_ERROR(m.forward_embedding(mb.tokens, model_opts_.micro_batch, model_opts_.seq_len));
  for (int l = 0; l < L; ++l) {
    if (first) ZT_RETURN_IF_ERROR(ensure_layer(l));
    ZT_RETURN_IF_ERROR(m.forward_block(l));
  }
  if (first) ZT_RETURN_IF_ERROR(ensure_layer(L));
  ZT_RETURN_IF_ERROR(m.forward_head());
  ZT_ASSIGN_OR_RETURN(const LossSum l, m.loss(mb.targets));
  *loss_sum += l.sum;
  return Status::OK();
}

void PsWorker::layer_done(int layer) {
  const int b = layout_.bucket_of_layer(layer);
  if (--bucket_pending_[static_cast<size_t>(b)] > 0) return;
  for (int s = 0; s < layout_.servers(); ++s) {  // the bucket is complete: push its slices
    const ElementRange r = layout_.slice(b, s);
    if (r.size() == 0) continue;
    sends_.emplace_back(s, ps_->send(grads_.data() + r.begin, r.size() * sizeof(float), s, kTagBucketBase + b));
    stats_.push_bytes += static_cast<int64_t>(r.size() * sizeof(float));
  }
}

Status PsWorker::backward_micro(const MicroBatch& mb, float dloss, bool push) {
  GptModel& m = *model_;
  const int L = model_opts_.model.n_layer;
  ZT_RETURN_IF_ERROR(m.backward_head(mb.targets, dloss));
  if (push) layer_done(L);
  for (int l = L - 1; l >= 0; --l) {
    ZT_RETURN_IF_ERROR(m.backward_block(l));
    if (push) layer_done(l);
  }
  m.backward_embedding(mb.tokens);
  if (push) layer_done(kEmbeddingLayer);
  return Status::OK();
}

void PsWorker::post_pulls() {
  for (int s = 0; s < layout_.servers(); ++s) {
    Pull& p = pulls_[static_cast<size_t>(s)];
    p.header_work = ps_->recv(&p.header, sizeof(PullHeader), s, kTagPullHeader);
    p.header_in = false;
    p.slices.clear();
    for (const ElementRange& r : layout_.reply_slices(s)) {
      p.slices.push_back(ps_->recv(params_.data() + r.begin, r.size() * sizeof(float), s, kTagPullData));
    }
    p.slice_in.assign(p.slices.size(), false);
  }
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
  float dloss = 0.0f;
  for (size_t m = 0; m < micro_batches.size(); ++m) {
    Stopwatch sw;
    ZT_RETURN_IF_ERROR(forward_micro(micro_batches[m], m == 0, loss_sum));
    out->forward_s += sw.seconds();
    sw.restart();
    if (m == 0) {
      if (count_work) {
        ZT_RETURN_IF_ERROR(wait(count_work, -1, [&](double e) {
          return "worker rank " + std::to_string(rank_) + ": the workers' token count for step " +
                 std::to_string(local_step_ + 1) + " did not complete within " + format_seconds(e) +
                 " (1.5 x the deadline): another worker is stopped or hung; stopping the job";
        }));
      }
      dloss = count_ > 0 ? static_cast<float>(1.0 / static_cast<double>(count_)) : 0.0f;
    }
    ZT_RETURN_IF_ERROR(backward_micro(micro_batches[m], dloss, m + 1 == micro_batches.size()));
    out->backward_s += sw.seconds();
  }
  return Status::OK();
}

StatusOr<PsWorkerStep> PsWorker::step(const std::vector<MicroBatch>& micro_batches) {
  ZT_CHECK(started_ && !stopped_ && unit_ != kNoUnit, "PsWorker::step without a unit from next_unit()");
  const int B = model_opts_.micro_batch, T = model_opts_.seq_len;
  ZT_ASSIGN_OR_RETURN(const int64_t local, check_batches(micro_batches));
  ps_->set_step(local_step_ + 1);
  if (rank_ == options_.slow_worker_rank && options_.slow_worker_delay_ms > 0.0) {  // the test hook
    Stopwatch sw;
    std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(options_.slow_worker_delay_ms));
    stats_.slow_s += sw.seconds();
  }
  // Synchronous mode normalises by the global batch's token count, as the engine does. The
  // count's all-reduce runs while the first forward goes on (which also sends the step
  // headers: a server then tells a worker stuck here from the stopped one it waits for).
  count_ = local;
  WorkHandle count_work;
  if (mode_ == PsMode::kSync && workers_->size() > 1) {
    workers_->set_step(local_step_ + 1);
    count_work = workers_->all_reduce(&count_, 1, CommDType::kI64);
  }
  ZT_RETURN_IF_ERROR(wait_sends());  // the last step's pushes read the gradients
  grads_.zero();
  header_sent_.assign(header_sent_.size(), false);
  bucket_pending_.clear();
  for (const PsBucket& b : layout_.buckets()) bucket_pending_.push_back(static_cast<int>(b.layers.size()));
  PsWorkerStep out;
  const double wait_before = stats_.pull_wait_s;
  double loss_sum = 0.0;
  ZT_RETURN_IF_ERROR(run_micro_batches(micro_batches, count_work, &loss_sum, &out));
  for (int s = 0; s < layout_.servers(); ++s) {  // (the forward has taken every slice in)
    ZT_RETURN_IF_ERROR(receive_pull(s));
    send_step_header(s);
  }
  commit_.loss_sum = loss_sum;
  commit_.sumsq = mode_ == PsMode::kSync ? 0.0 : sum_of_squares(grads_.data(), grads_.size(), model_backend().ops());
  commit_.counted = local;
  for (int s = 0; s < layout_.servers(); ++s) {
    sends_.emplace_back(s, ps_->send(&commit_, sizeof(PushCommit), s, kTagCommit));
  }
  post_pulls();
  local_step_ += 1;
  stats_.units += 1;
  stats_.tokens += static_cast<int64_t>(micro_batches.size()) * B * T;
  stats_.compute_s += out.forward_s + out.backward_s - (stats_.pull_wait_s - wait_before);
  out.unit = unit_;
  out.local_step = local_step_;
  out.loss = local > 0 ? loss_sum / static_cast<double>(local) : 0.0;
  out.tokens = static_cast<int64_t>(micro_batches.size()) * B * T;
  out.pull_wait_s = stats_.pull_wait_s - wait_before;
  out.server0 = server0_;
  return out;
}

Status PsWorker::finish() {
  ZT_CHECK(stopped_, "PsWorker::finish before next_unit() returned kNoUnit");
  if (finished_) return Status::OK();
  for (int s = 0; s < layout_.servers(); ++s) ZT_RETURN_IF_ERROR(receive_pull(s));  // replies to the last push
  post_pulls();
  for (int s = 0; s < layout_.servers(); ++s) {
    ZT_RETURN_IF_ERROR(receive_pull(s));
    if (pulls_[static_cast<size_t>(s)].header.kind != kPullFinal) {
      return Status::Internal("worker rank " + std::to_string(rank_) + ": parameter server rank " + std::to_string(s) +
                              " sent kind " + std::to_string(pulls_[static_cast<size_t>(s)].header.kind) +
                              " where the final parameters were due");
    }
  }
  ZT_RETURN_IF_ERROR(wait_sends());
  for (const WorkHandle& w : note_works_) {
    ZT_RETURN_IF_ERROR(wait(w, -1, [&](double e) {
      return "worker rank " + std::to_string(rank_) + ": a parameter server did not take this worker's last note within " +
             format_seconds(e) + "; stopping the job";
    }));
  }
  finished_ = true;
  publish({0, params_.size()});  // evaluate() runs on the final parameters
  stats_.wall_s = now_seconds() - start_time_;
  return Status::OK();
}

StatusOr<double> PsWorker::evaluate(const std::vector<MicroBatch>& batches) {
  ZT_CHECK(finished_, "PsWorker::evaluate before finish()");
  const int B = model_opts_.micro_batch, T = model_opts_.seq_len;
  const size_t W = static_cast<size_t>(workers_->size());
  double sum = 0.0;
  int64_t count = 0;
  for (size_t i = static_cast<size_t>(workers_->rank()); i < batches.size(); i += W) {
    ZT_RETURN_IF_ERROR(model_->validate_batch(batches[i].tokens, batches[i].targets, B, T));
    ZT_RETURN_IF_ERROR(model_->forward(batches[i].tokens, B, T));
    ZT_ASSIGN_OR_RETURN(const LossSum l, model_->loss(batches[i].targets));
    sum += l.sum;
    count += l.count;
  }
  auto what = [&](double e) {
    return "worker rank " + std::to_string(rank_) + ": the workers' validation sums did not complete within " +
           format_seconds(e) + "; stopping the job";
  };
  ZT_RETURN_IF_ERROR(wait(workers_->all_reduce(&sum, 1, CommDType::kF64), -1, what));
  ZT_RETURN_IF_ERROR(wait(workers_->all_reduce(&count, 1, CommDType::kI64), -1, what));
  return count > 0 ? sum / static_cast<double>(count) : 0.0;
}

}  // namespace zt
