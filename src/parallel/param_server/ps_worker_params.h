// PsPulledParams: a parameter-server worker's parameters, pulled from the servers and read
// by the layer walk (nn/layer_walk.h) on use, as ZeRO-3 reads a gathered layer.
// - After each push every server replies with a header (its versions and, from server 0,
//   the worker's next unit), then its shard in reply slices (PsLayout::reply_slices).
// - A layer's first use in a step waits only for the slices that hold it and, in bf16,
//   casts them into the 16-bit copy the model reads; the first layers compute while later
//   slices are still being updated or sent.
// - The step header to a server (the versions this step read, for staleness) goes out the
//   first time the step needs that server, so the server posts the step's receives early.
// Invariants: the fp32 values are the servers' (or, before the first reply, the seed's:
// the servers derive the same); the model only reads layers this step has waited for.
// Thread-safety: one thread, the worker's.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "backend/backend.h"
#include "core/status.h"
#include "nn/layer_walk.h"
#include "parallel/param_server/ps_layout.h"
#include "parallel/param_server/ps_messages.h"
#include "parallel/param_server/ps_options.h"
#include "parallel/param_server/ps_stats.h"
#include "parallel/param_server/ps_worker_link.h"

namespace zt {

class PsPulledParams final : public LayerParamSource {
 public:
  // The seed's initial values; the model reads a 16-bit copy when the backend computes in 16 bits.
  static StatusOr<std::unique_ptr<PsPulledParams>> create(const Backend& backend, const ParamTable& table,
                                                          const PsLayout& layout, PsWorkerLink* link,
                                                          PsWorkerStats* stats, uint64_t seed);
  // What the model binds: the 16-bit copy, or the fp32 values.
  void* model_params() { return compute_.empty() ? static_cast<void*>(fp32_.data()) : compute_.as<void>(); }
  const Arena& fp32() const { return fp32_; }

  // A step on `unit` starts (the worker's local_step-th): each layer is waited for again.
  void begin_step(int64_t unit, int64_t local_step);
  // The header of server's reply to the last push.
  Status receive_header(int server);
  const PullHeader& header(int server) const { return pulls_[static_cast<size_t>(server)].header; }
  // Server 0's header as last received (the next pull overwrites header(0) when it lands).
  const PullHeader& server0() const { return server0_; }
  // All of server's reply.
  Status receive_server(int server);
  // This step's header to server (once per step): the versions it read.
  void send_step_header(int server);
  // Receives for the replies to this step's push.
  void post_pulls();
  // The worker has no more work: the done header to every server.
  void send_done();
  // The final parameters are in: every layer readable from here on.
  void complete();

  void begin_micro(bool) override {}
  StatusOr<void*> layer_params(int layer) override;
  void release(int) override {}

 private:
  PsPulledParams(const Backend& backend, const ParamTable& table, const PsLayout& layout, PsWorkerLink* link,
                 PsWorkerStats* stats);
  Status receive_range(int server, ElementRange range);  // the reply's slices that intersect range
  void publish(ElementRange range);  // 16-bit: fp32_ -> compute_ over range

  const Backend& backend_;
  const ParamTable& table_;
  const PsLayout& layout_;
  PsWorkerLink* link_;
  PsWorkerStats* stats_;
  Arena fp32_;     // the pulled values, in the backend's memory
  Arena compute_;  // 16-bit compute: the copy the model reads
  struct Pull {    // per server: the pending reply
    PullHeader header;
    WorkHandle header_work;
    bool header_in = true;
    std::vector<WorkHandle> slices;
    std::vector<bool> slice_in;
  };
  std::vector<Pull> pulls_;
  std::vector<bool> header_sent_;
  std::vector<int64_t> read_version_, read_clock_;
  std::vector<StepHeader> step_header_;
  std::vector<bool> ready_;  // by layer + 1: waited for in this step
  PullHeader server0_;
  bool complete_ = false;
  int64_t unit_ = kNoUnit, local_step_ = 0;
};

}  // namespace zt
