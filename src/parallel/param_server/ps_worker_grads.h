// PsPushedGrads: a parameter-server worker's gradients, the layer walk's gradient sink
// (nn/layer_walk.h) as GradReducer is for data parallelism: backward accumulates every
// micro-batch into one fp32 arena, and on the step's last micro-batch each bucket
// (PsLayout: consecutive layers in backward order) goes out as soon as its last layer is
// done, one slice per server's shard, while backward continues.
// Invariants: begin_step() runs only after the last step's pushes were taken (they read
// the arena); a bucket is pushed once per step.
// Thread-safety: one thread, the worker's.
#pragma once

#include <memory>
#include <vector>

#include "backend/backend.h"
#include "core/status.h"
#include "nn/layer_walk.h"
#include "parallel/param_server/ps_layout.h"
#include "parallel/param_server/ps_stats.h"
#include "parallel/param_server/ps_worker_link.h"

namespace zt {

class PsPushedGrads final : public LayerGradSink {
 public:
  static StatusOr<std::unique_ptr<PsPushedGrads>> create(const Backend& backend, const ParamTable& table,
                                                         const PsLayout& layout, PsWorkerLink* link,
                                                         PsWorkerStats* stats);
  const Arena& arena() const { return grads_; }
  // A step starts: the gradients zeroed, every bucket pending again.
  void begin_step();

  void begin_micro(bool last) override { push_ = last; }
  float* acquire_layer(int layer) override { return grads_.data() + layout_.layer_range(layer).begin; }
  void layer_done(int layer) override;
  Status end_micro() override { return Status::OK(); }

 private:
  PsPushedGrads(const PsLayout& layout, PsWorkerLink* link, PsWorkerStats* stats)
      : layout_(layout), link_(link), stats_(stats) {}

  const PsLayout& layout_;
  PsWorkerLink* link_;
  PsWorkerStats* stats_;
  Arena grads_;
  std::vector<int> pending_;  // per bucket: layers not yet done in the last micro-batch
  bool push_ = false;
};

}  // namespace zt
