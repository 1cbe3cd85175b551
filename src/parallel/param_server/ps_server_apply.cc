// A server's updates and replies: the synchronous step, the asynchronous push, the
// (gated) replies with the next unit of work, and the final parameters; see ps_server.h.
// A reply is a PullHeader and then the shard in its reply slices, forward order.
#include <cmath>
#include <cstring>

#include "core/timer.h"
#include "optim/grad_clip.h"
#include "parallel/param_server/ps_server.h"
#include "parallel/param_server/ps_server_peer.h"
#include "parallel/param_server/ps_wait.h"

namespace zt {

StepHyper PsServer::hyper_at(int64_t global_step, double norm, double* lr) const {
  const ScheduleValue sched = schedule_.at(global_step - 1);  // the engine's convention
  StepHyper h;
  h.lr = sched.lr;
  h.momentum = sched.momentum;
  h.grad_scale = clip_coefficient(norm, model_.gradient_clipping);
  *lr = sched.lr;
  return h;
}

// Server 0 hands out the next unit: statically in kSync (step `applied`, rank `worker`:
// the all-reduce engine's assignment), first come first served otherwise.
void PsServer::fill_reply(Peer& p, int64_t kind, int64_t clock) {
  const int64_t W = layout_.workers();
  p.reply = last_;
  p.reply.kind = kind;
  p.reply.version = version_;
  p.reply.clock = std::min(clock, p.applied);
  p.reply.global_step = mode_ == PsMode::kSync ? version_ : version_ / W;
  p.reply.next_unit = kNoUnit;
  if (index_ != 0 || kind != kPullParams || p.state == Peer::State::kDone) return;
  if (mode_ == PsMode::kSync) {
    const int64_t unit = p.applied * W + p.worker;
    if (unit < total_units_) p.reply.next_unit = unit;
  } else if (next_unit_ < total_units_) {
    p.reply.next_unit = next_unit_++;
  }
}

void PsServer::send_slice(Peer& p, size_t k, const float* shard_data) {
  const ElementRange r = slices_[k];
  p.reply_works.push_back(
      ps_->send(shard_data + (r.begin - range_.begin), r.size() * sizeof(float), p.rank, kTagPullData));
  stats_.pull_bytes += static_cast<int64_t>(r.size() * sizeof(float));
}

Status PsServer::apply_push(Peer& p) {
  Stopwatch sw;
  const int64_t W = layout_.workers();
  const int64_t staleness = p.applied - p.header.read_clock;
  ZT_CHECK(mode_ != PsMode::kBounded || staleness <= options_.staleness,
           "worker rank %d pushed with staleness %lld past the bound %lld", p.rank, static_cast<long long>(staleness),
           static_cast<long long>(options_.staleness));
  stats_.staleness.add(staleness);
  stats_.missed.add(version_ - p.header.read_version);
  const double norm = std::sqrt(p.commit.sumsq);
  double lr = 0.0;
  StepHyper hyper = hyper_at(version_ / W, norm, &lr);
  // A push is 1/W of a global step: W pushes without staleness make exactly the
  // synchronous SGD step, and move AdamW's parameters as far as one synchronous step
  // (its step size does not scale with the gradient).
  hyper.lr /= static_cast<double>(W);
  for (size_t k = 0; k < slices_.size(); ++k) {
    const size_t off = slices_[k].begin - range_.begin;
    optimizers_[k]->step(params_.data() + off, p.grad.data() + off, hyper);
  }
  version_ += 1;
  p.applied += 1;
  stats_.updates += 1;
  last_.loss = p.commit.counted > 0 ? p.commit.loss_sum / static_cast<double>(p.commit.counted) : 0.0;
  last_.grad_norm = norm;
  last_.lr = lr;
  post_header(p);
  p.owes_reply = true;  // sent by send_replies, when the bound allows
  stats_.apply_s += sw.seconds();
  return Status::OK();
}

Status PsServer::reduce_norm(double* sq) {
  if (servers_->size() <= 1) return Status::OK();
  const int64_t step = version_ + 1;
  return wait_bounded(servers_->all_reduce(sq, 1, CommDType::kF64), options_.deadline_s, [&](double e) {
    const std::string other =
        servers_->size() == 2 ? "parameter server rank " + std::to_string(1 - index_) : std::string("another server");
    return "parameter server rank " + std::to_string(index_) + ": the servers' gradient-norm reduction for step " +
           std::to_string(step) + " did not complete within " + format_seconds(e) + ": " + other +
           " is stopped or hung, or waits for a stopped worker; stopping the job";
  });
}

Status PsServer::apply_sync() {
  Stopwatch sw;
  const size_t n = range_.size();
  float* acc = peers_[0]->grad.data();
  for (size_t w = 1; w < peers_.size(); ++w) {  // worker order: deterministic
    const float* g = peers_[w]->grad.data();
    for (size_t i = 0; i < n; ++i) acc[i] += g[i];
  }
  double sq = sum_of_squares(acc, n);
  ZT_RETURN_IF_ERROR(reduce_norm(&sq));
  double loss_sum = 0.0;
  int64_t counted = 0;
  for (const auto& p : peers_) {
    loss_sum += p->commit.loss_sum;
    counted += p->commit.counted;
  }
  // The last step's replies were sent from the shard itself: complete before it changes.
  for (const auto& p : peers_) {
    for (const WorkHandle& w : p->reply_works) ZT_RETURN_IF_ERROR(w->wait());
    p->reply_works.clear();
  }
  const double norm = std::sqrt(sq);
  double lr = 0.0;
  const StepHyper hyper = hyper_at(version_, norm, &lr);
  for (const auto& p : peers_) {
    stats_.staleness.add(p->applied - p->header.read_clock);
    stats_.missed.add(version_ - p->header.read_version);
    p->applied += 1;
    post_header(*p);
  }
  version_ += 1;
  stats_.updates += 1;
  last_.loss = counted > 0 ? loss_sum / static_cast<double>(counted) : 0.0;
  last_.grad_norm = norm;
  last_.lr = lr;
  records_.push_back({version_, last_.loss, norm, lr});
  // Headers first, then each slice as soon as it is updated: the workers' forward starts
  // on the first layers while the rest of the shard is still being updated.
  const int64_t c = clock();
  for (const auto& p : peers_) {
    fill_reply(*p, kPullParams, c);
    p->reply_works.push_back(ps_->send(&p->reply, sizeof(PullHeader), p->rank, kTagPullHeader));
    p->waiting_since = now_seconds();
  }
  for (size_t k = 0; k < slices_.size(); ++k) {
    const size_t off = slices_[k].begin - range_.begin;
    optimizers_[k]->step(params_.data() + off, acc + off, hyper);
    for (const auto& p : peers_) send_slice(*p, k, params_.data());
  }
  stats_.apply_s += sw.seconds();
  return Status::OK();
}

Status PsServer::send_replies(bool* moved) {
  const int64_t c = clock();
  for (const auto& pp : peers_) {
    Peer& p = *pp;
    if (!p.owes_reply) continue;
    const bool done = p.state == Peer::State::kDone;
    if (mode_ == PsMode::kBounded && !done && p.applied - c > options_.staleness) continue;  // too far ahead
    if (!all_completed(p.reply_works)) continue;  // the previous reply is still leaving
    for (const WorkHandle& w : p.reply_works) ZT_RETURN_IF_ERROR(w->wait());
    p.reply_works.clear();
    fill_reply(p, kPullParams, c);
    backend_or_cpu(model_.backend).copy_to_host(p.snapshot.data(), params_.data(), params_.bytes());  // the shard moves on with the next push
    p.reply_works.push_back(ps_->send(&p.reply, sizeof(PullHeader), p.rank, kTagPullHeader));
    for (size_t k = 0; k < slices_.size(); ++k) send_slice(p, k, p.snapshot.data());
    p.owes_reply = false;
    p.waiting_since = now_seconds();
    *moved = true;
  }
  return Status::OK();
}

Status PsServer::send_finals() {
  for (const auto& p : peers_) {
    for (const WorkHandle& w : p->reply_works) ZT_RETURN_IF_ERROR(w->wait());
    p->reply_works.clear();
    fill_reply(*p, kPullFinal, p->applied);
    p->reply_works.push_back(ps_->send(&p->reply, sizeof(PullHeader), p->rank, kTagPullHeader));
    for (size_t k = 0; k < slices_.size(); ++k) send_slice(*p, k, params_.data());
  }
  for (const auto& p : peers_) {
    for (const WorkHandle& w : p->reply_works) {
      ZT_RETURN_IF_ERROR(wait_bounded(w, options_.deadline_s, [&](double e) {
        return "parameter server rank " + std::to_string(index_) + ": worker rank " + std::to_string(p->rank) +
               " did not take its final parameters within " + format_seconds(e) + "; stopping the job";
      }));
    }
  }
  return Status::OK();
}

}  // namespace zt
