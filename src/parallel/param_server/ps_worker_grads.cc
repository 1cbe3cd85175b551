// A worker's gradients, pushed per bucket as backward completes them; see ps_worker_grads.h.
#include "parallel/param_server/ps_worker_grads.h"

#include "parallel/param_server/ps_messages.h"

namespace zt {

StatusOr<std::unique_ptr<PsPushedGrads>> PsPushedGrads::create(const Backend& backend, const ParamTable& table,
                                                               const PsLayout& layout, PsWorkerLink* link,
                                                               PsWorkerStats* stats) {
  std::unique_ptr<PsPushedGrads> g(new PsPushedGrads(layout, link, stats));
  ZT_ASSIGN_OR_RETURN(g->grads_, backend.allocate(table.numel(), DType::kF32, "the worker's gradients"));
  return g;
}

void PsPushedGrads::begin_step() {
  grads_.zero();
  pending_.clear();
  for (const PsBucket& b : layout_.buckets()) pending_.push_back(static_cast<int>(b.layers.size()));
}

void PsPushedGrads::layer_done(int layer) {
  if (!push_) return;
  const int b = layout_.bucket_of_layer(layer);
  if (--pending_[static_cast<size_t>(b)] > 0) return;
  for (int s = 0; s < layout_.servers(); ++s) {  // the bucket is complete: push its slices
    const ElementRange r = layout_.slice(b, s);
    if (r.size() == 0) continue;
    link_->send(s, grads_.data() + r.begin, r.size() * sizeof(float), kTagBucketBase + b);
    stats_->push_bytes += static_cast<int64_t>(r.size() * sizeof(float));
  }
}

}  // namespace zt
