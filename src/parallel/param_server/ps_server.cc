// The server's serving loop: receive pushes, hand them to the update (ps_server_apply.cc),
// watch the deadlines; see ps_server.h.
#include "parallel/param_server/ps_server.h"

#include <algorithm>
#include <climits>
#include <cstdio>
#include <string>

#include "core/timer.h"
#include "nn/gpt_params.h"
#include "optim/adamw.h"
#include "optim/sgd.h"
#include "parallel/param_server/ps_server_peer.h"
#include "parallel/param_server/ps_wait.h"

namespace zt {

PsServer::PsServer(const PsModelOptions& model, const PsOptions& options, const PsLayout& layout, ProcessGroup* ps,
                   ProcessGroup* servers)
    : model_(model),
      options_(options),
      mode_(options.effective_mode()),
      layout_(layout),
      ps_(ps),
      servers_(servers),
      index_(ps->rank()),
      range_(layout.shard(ps->rank())),
      schedule_(model.schedule) {}

PsServer::~PsServer() = default;

StatusOr<std::unique_ptr<PsServer>> PsServer::create(const PsModelOptions& model, const PsOptions& options,
                                                     const PsLayout& layout, ProcessGroup* ps, ProcessGroup* servers) {
  ZT_CHECK(layout.is_server(ps->rank()), "rank %d is not a server", ps->rank());
  if (model.optimizer == OptimizerKind::kLamb) {
    return Status::Unimplemented(
        "/optimizer/type: LAMB with the parameter server is not supported: the trust ratio needs whole tensors");
  }
  if (model.optimizer != OptimizerKind::kAdamW && model.optimizer != OptimizerKind::kSgd) {
    return Status::Unimplemented("optimizer kind " + std::to_string(static_cast<int>(model.optimizer)) +
                                 " is not built for the parameter server");
  }
  std::unique_ptr<PsServer> s(new PsServer(model, options, layout, ps, servers));
  if (s->range_.size() == 0) {
    return Status::InvalidArgument("/parameter_server/servers: " + std::to_string(layout.servers()) +
                                   " servers leave server " + std::to_string(s->index_) + " an empty shard");
  }
  const ParamTable table = build_gpt_param_table(model.model);
  const Backend& backend = backend_or_cpu(model.backend);
  for (ProcessGroup* g : {ps, servers}) {  // they move this backend's arenas (comm/memory_domain.h)
    if (g != nullptr) g->set_memory_domain(backend.memory_domain());
  }
  ZT_ASSIGN_OR_RETURN(s->params_, backend.allocate(s->range_.size(), DType::kF32, "the server's parameter shard"));
  init_params_into(backend, table, s->range_, s->params_.data(), model.seed);
  s->slices_ = layout.reply_slices(s->index_);
  for (const ElementRange& r : s->slices_) {
    if (model.optimizer == OptimizerKind::kAdamW) {
      ZT_ASSIGN_OR_RETURN(auto opt, AdamW::create(table, r, model.adamw, backend));
      s->optimizers_.push_back(std::move(opt));
    } else {
      ZT_ASSIGN_OR_RETURN(auto opt, Sgd::create(table, r, model.sgd, backend));
      s->optimizers_.push_back(std::move(opt));
    }
  }
  for (int w = 0; w < layout.workers(); ++w) {
    auto p = std::make_unique<Peer>();
    p->worker = w;
    p->rank = layout.worker_rank(w);
    ZT_ASSIGN_OR_RETURN(p->grad, FloatBuffer::allocate(s->range_.size(), "a worker's gradient slice on its server"));
    if (s->mode_ != PsMode::kSync) {
      ZT_ASSIGN_OR_RETURN(p->snapshot, FloatBuffer::allocate(s->range_.size(), "a reply snapshot on a server"));
    }
    s->peers_.push_back(std::move(p));
  }
  return s;
}

void PsServer::post_header(Peer& p) {
  p.header_work = ps_->recv(&p.header, sizeof(StepHeader), p.rank, kTagStepHeader);
  p.state = Peer::State::kAwaitHeader;
}

Status PsServer::poll(Peer& p, bool* moved) {
  if (p.note_work && p.note_work->completed()) {
    ZT_RETURN_IF_ERROR(p.note_work->wait());
    p.note_work = nullptr;
    *moved = true;
    if (p.note.kind == kNoteFinished) {
      p.notes_closed = true;
    } else {
      p.blocked_on = static_cast<int>(p.note.server);
      p.note_work = ps_->recv(&p.note, sizeof(PsNote), p.rank, kTagNote);
    }
  }
  if (p.state == Peer::State::kAwaitHeader) {
    if (!p.header_work->completed()) return Status::OK();
    ZT_RETURN_IF_ERROR(p.header_work->wait());
    p.header_work = nullptr;
    p.blocked_on = -1;
    *moved = true;
    if (p.header.kind == kStepDone) {
      p.state = Peer::State::kDone;
      return Status::OK();
    }
    if (p.header.kind != kStepPush || p.header.unit < 0 || p.header.unit >= total_units_) {
      return Status::Internal("parameter server rank " + std::to_string(index_) + ": worker rank " +
                              std::to_string(p.rank) + " sent a malformed step header (kind " +
                              std::to_string(p.header.kind) + ", unit " + std::to_string(p.header.unit) + ")");
    }
    for (size_t b = 0; b < layout_.buckets().size(); ++b) {
      const ElementRange r = layout_.slice(static_cast<int>(b), index_);
      if (r.size() == 0) continue;
      p.push_works.push_back(ps_->recv(p.grad.data() + (r.begin - range_.begin), r.size() * sizeof(float), p.rank,
                                       kTagBucketBase + static_cast<int>(b)));
    }
    p.push_works.push_back(ps_->recv(&p.commit, sizeof(PushCommit), p.rank, kTagCommit));
    p.state = Peer::State::kReceiving;
  }
  if (p.state == Peer::State::kReceiving && all_completed(p.push_works)) {
    for (const WorkHandle& w : p.push_works) ZT_RETURN_IF_ERROR(w->wait());
    p.push_works.clear();
    p.blocked_on = -1;
    p.state = Peer::State::kReady;
    stats_.pushes += 1;
    stats_.push_bytes += static_cast<int64_t>(range_.size() * sizeof(float));
    *moved = true;
  }
  return Status::OK();
}

int64_t PsServer::clock() const {
  int64_t c = INT64_MAX;
  for (const auto& p : peers_) {
    if (p->state != Peer::State::kDone) c = std::min(c, p->applied);
  }
  return c;
}

// Blame order among workers past the deadline: one that has not started its step and
// sent no note, then one that has started (in synchronous mode it may be waiting for the
// first in the workers' token count), then one that says it waits on another server,
// whose silence is then the cause.
Status PsServer::check_deadlines() const {
  const double now = now_seconds();
  const Peer* late = nullptr;
  auto rank_of = [](const Peer& p) { return p.blocked_on >= 0 ? 2 : p.state == Peer::State::kAwaitHeader ? 0 : 1; };
  for (const auto& pp : peers_) {
    const Peer& p = *pp;
    const bool working = p.state == Peer::State::kAwaitHeader || p.state == Peer::State::kReceiving;
    if (!working || p.owes_reply || now - p.waiting_since <= options_.deadline_s) continue;
    if (late == nullptr || rank_of(p) < rank_of(*late)) late = &p;
  }
  if (late == nullptr) return Status::OK();
  const Peer& p = *late;
  const std::string me = "parameter server rank " + std::to_string(index_) + ": ";
  const std::string who = "worker rank " + std::to_string(p.rank) + " (worker " + std::to_string(p.worker) + " of " +
                          std::to_string(layout_.workers()) + ")";
  char deadline[32];
  std::snprintf(deadline, sizeof(deadline), "%g", options_.deadline_s);
  const std::string within = " within " + format_seconds(now - p.waiting_since) + " of receiving its parameters "
                             "(deadline " + deadline + " s)";
  if (p.blocked_on >= 0) {
    return Status::DeadlineExceeded(me + who + " sent nothing for its step " + std::to_string(p.applied + 1) + within +
                                    ": it reports waiting for parameter server rank " + std::to_string(p.blocked_on) +
                                    ", which is stopped or hung (or itself waits for a stopped worker); stopping the job");
  }
  std::string what = "no step header";
  if (p.state == Peer::State::kReceiving) {
    int got = 0;
    for (const WorkHandle& w : p.push_works) got += w->completed() ? 1 : 0;
    what = "only " + std::to_string(got) + " of the " + std::to_string(p.push_works.size()) + " gradient messages";
  }
  return Status::DeadlineExceeded(me + who + " sent " + what + " for its step " + std::to_string(p.applied + 1) +
                                  within + ": the worker is stopped, hung or slower than the deadline; stopping the job");
}

Status PsServer::run(int64_t steps) {
  Stopwatch clock_all;
  const int64_t W = layout_.workers();
  total_units_ = steps * W;
  next_unit_ = W;  // units 0..W-1 are the workers' first steps
  for (const auto& p : peers_) {
    post_header(*p);
    p->note_work = ps_->recv(&p->note, sizeof(PsNote), p->rank, kTagNote);
    p->waiting_since = now_seconds();
  }
  Backoff backoff;
  while (true) {
    bool moved = false;
    for (const auto& p : peers_) ZT_RETURN_IF_ERROR(poll(*p, &moved));
    if (mode_ == PsMode::kSync) {
      bool all_ready = true;
      for (const auto& p : peers_) all_ready = all_ready && p->state == Peer::State::kReady;
      if (all_ready) {
        ZT_RETURN_IF_ERROR(apply_sync());
        moved = true;
      }
    } else {
      for (const auto& p : peers_) {
        if (p->state != Peer::State::kReady) continue;
        ZT_RETURN_IF_ERROR(apply_push(*p));
        moved = true;
      }
    }
    ZT_RETURN_IF_ERROR(send_replies(&moved));
    bool finished = true;
    for (const auto& p : peers_) {
      finished = finished && p->state == Peer::State::kDone && !p->owes_reply && p->notes_closed;
    }
    if (finished) break;
    ZT_RETURN_IF_ERROR(check_deadlines());
    if (moved) {
      backoff.reset();
    } else {
      backoff.pause();
    }
  }
  ZT_RETURN_IF_ERROR(send_finals());
  stats_.serve_s = clock_all.seconds();
  return Status::OK();
}

}  // namespace zt
