// A worker's pulled parameters, waited for per layer on first use; see ps_worker_params.h.
#include "parallel/param_server/ps_worker_params.h"

#include <algorithm>

#include "core/timer.h"
#include "nn/gpt_params.h"
#include "parallel/param_server/ps_wait.h"

namespace zt {

PsPulledParams::PsPulledParams(const Backend& backend, const ParamTable& table, const PsLayout& layout,
                               PsWorkerLink* link, PsWorkerStats* stats)
    : backend_(backend), table_(table), layout_(layout), link_(link), stats_(stats) {}

StatusOr<std::unique_ptr<PsPulledParams>> PsPulledParams::create(const Backend& backend, const ParamTable& table,
                                                                 const PsLayout& layout, PsWorkerLink* link,
                                                                 PsWorkerStats* stats, uint64_t seed) {
  std::unique_ptr<PsPulledParams> p(new PsPulledParams(backend, table, layout, link, stats));
  ZT_ASSIGN_OR_RETURN(p->fp32_, backend.allocate(table.numel(), DType::kF32, "the worker's parameters"));
  init_params_into(backend, table, {0, table.numel()}, p->fp32_.data(), seed);  // the servers' values too
  if (backend.compute_dtype() != DType::kF32) {
    ZT_ASSIGN_OR_RETURN(p->compute_, backend.allocate(table.numel(), backend.compute_dtype(), "the worker's 16-bit copy"));
  }
  const size_t S = static_cast<size_t>(layout.servers());
  p->pulls_.resize(S);
  for (int s = 0; s < layout.servers(); ++s) {
    p->pulls_[static_cast<size_t>(s)].slice_in.assign(layout.reply_slices(s).size(), true);  // the initial values
  }
  p->header_sent_.assign(S, false);
  p->read_version_.assign(S, 0);
  p->read_clock_.assign(S, 0);
  p->step_header_.resize(S);
  int top = kEmbeddingLayer;
  for (int l : table.layers()) top = std::max(top, l);
  p->ready_.assign(static_cast<size_t>(top) + 2, false);  // by layer + 1
  return p;
}

void PsPulledParams::begin_step(int64_t unit, int64_t local_step) {
  unit_ = unit;
  local_step_ = local_step;
  header_sent_.assign(header_sent_.size(), false);
  ready_.assign(ready_.size(), false);
}

Status PsPulledParams::receive_header(int s) {
  Pull& p = pulls_[static_cast<size_t>(s)];
  if (p.header_in) return Status::OK();
  Stopwatch sw;
  ZT_RETURN_IF_ERROR(link_->wait(p.header_work, s, [&](double e) {
    return "worker rank " + std::to_string(link_->rank()) + ": parameter server rank " + std::to_string(s) +
           " sent no reply to this worker's step " + std::to_string(local_step_) + " within " + format_seconds(e) +
           " (1.5 x the deadline): the server is stopped or hung, or waits for a stopped worker; stopping the job";
  }));
  p.header_in = true;
  read_version_[static_cast<size_t>(s)] = p.header.version;
  read_clock_[static_cast<size_t>(s)] = p.header.clock;
  if (s == 0) server0_ = p.header;
  stats_->pull_wait_s += sw.seconds();
  return Status::OK();
}

Status PsPulledParams::receive_range(int s, ElementRange range) {
  ZT_RETURN_IF_ERROR(receive_header(s));
  Pull& p = pulls_[static_cast<size_t>(s)];
  const std::vector<ElementRange>& slices = layout_.reply_slices(s);
  Stopwatch sw;
  for (size_t k = 0; k < slices.size(); ++k) {
    if (p.slice_in[k] || slices[k].end <= range.begin || slices[k].begin >= range.end) continue;
    ZT_RETURN_IF_ERROR(link_->wait(p.slices[k], s, [&](double e) {
      return "worker rank " + std::to_string(link_->rank()) + ": parameter server rank " + std::to_string(s) +
             " did not finish sending its parameters within " + format_seconds(e) +
             " (1.5 x the deadline): the server is stopped or hung; stopping the job";
    }));
    p.slice_in[k] = true;
    stats_->pull_bytes += static_cast<int64_t>(slices[k].size() * sizeof(float));
  }
  stats_->pull_wait_s += sw.seconds();
  return Status::OK();
}

Status PsPulledParams::receive_server(int s) { return receive_range(s, layout_.shard(s)); }

void PsPulledParams::send_step_header(int s) {
  const size_t i = static_cast<size_t>(s);
  if (header_sent_[i]) return;
  step_header_[i] = StepHeader{kStepPush, unit_, read_version_[i], read_clock_[i]};
  link_->send(s, &step_header_[i], sizeof(StepHeader), kTagStepHeader);
  header_sent_[i] = true;
}

void PsPulledParams::send_done() {
  for (int s = 0; s < layout_.servers(); ++s) {
    step_header_[static_cast<size_t>(s)] = StepHeader{kStepDone, kNoUnit, 0, 0};
    link_->send(s, &step_header_[static_cast<size_t>(s)], sizeof(StepHeader), kTagStepHeader);
  }
}

StatusOr<void*> PsPulledParams::layer_params(int layer) {
  const ElementRange range = layout_.layer_range(layer);
  const size_t i = static_cast<size_t>(layer + 1);
  if (!complete_ && !ready_[i]) {
    int first = 0, last = 0;
    layout_.servers_of(range, &first, &last);
    for (int s = first; s <= last; ++s) {
      ZT_RETURN_IF_ERROR(receive_header(s));
      send_step_header(s);  // the server can post this step's receives while we compute
      ZT_RETURN_IF_ERROR(receive_range(s, range));
    }
    publish(range);
    ready_[i] = true;
  }
  return static_cast<unsigned char*>(model_params()) + range.begin * dtype_size(backend_.compute_dtype());
}

void PsPulledParams::publish(ElementRange range) {
  if (compute_.empty()) return;
  backend_.half_ops()->from_f32(compute_.as<half_t>() + range.begin, fp32_.data() + range.begin,
                                static_cast<int64_t>(range.size()));
}

void PsPulledParams::post_pulls() {
  for (int s = 0; s < layout_.servers(); ++s) {
    Pull& p = pulls_[static_cast<size_t>(s)];
    p.header_work = link_->group().recv(&p.header, sizeof(PullHeader), s, kTagPullHeader);
    p.header_in = false;
    p.slices.clear();
    for (const ElementRange& r : layout_.reply_slices(s)) {
      p.slices.push_back(link_->group().recv(fp32_.data() + r.begin, r.size() * sizeof(float), s, kTagPullData));
    }
    p.slice_in.assign(p.slices.size(), false);
  }
}

void PsPulledParams::complete() {
  publish({0, fp32_.size()});
  complete_ = true;
}

}  // namespace zt
