// The pipeline executor: runs this stage's instruction list (parallel/pipeline/
// schedule.h) for one optimizer step — point-to-point activations forward, gradients
// backward, the loss on the last stage — then the tied-weight and data-parallel
// gradient reductions. Sends are asynchronous and waited for only before their buffer
// is reused; receives block, and that blocked time is the stage's pipeline bubble.
#include <cstring>

#include "core/timer.h"
#include "engine/trainer.h"
#include "nn/param_names.h"

namespace zt {

namespace {
int activation_tag(int m) { return 2 * m; }
int grad_tag(int m) { return 2 * m + 1; }
}  // namespace

Status Trainer::reduce_tied_grads() {
  if (tied_ == nullptr || states_->full_grads() == nullptr || !options_.model.tied_head()) return Status::OK();
  const ParamTable& table = model_->param_table();
  // The embedding matrix (first stage) or the head's copy of it (last stage): one name for both.
  const TensorSpec& wte = table.at(table.find(std::string(param_names(options_.model.family()).embed) + ".weight"));
  return tied_->all_reduce(states_->full_grads() + wte.offset, wte.numel, CommDType::kF32)->wait();
}

Status Trainer::flush_grad_reductions() {
  reducer_->begin_micro(/*last=*/true);
  for (int layer : reducer_->completion_order()) reducer_->layer_done(layer);
  return reducer_->end_micro();
}

namespace {

// Waits for a send in flight (if any) and clears it.
Status settle(WorkHandle& w) {
  if (w == nullptr) return Status::OK();
  Status st = w->wait();
  w = nullptr;
  return st;
}

}  // namespace

// The stage's part of the one layer walk (nn/layer_walk.h); gradients accumulate in the
// full arena and are reduced after the schedule (kReduceGrads).
Status Trainer::stage_forward(const std::vector<MicroBatch>& mbs, int mb, int B, int T) {
  const MicroBatch& batch = mbs[static_cast<size_t>(mb)];
  ZT_RETURN_IF_ERROR(prepare_micro(static_cast<size_t>(mb), B, T));
  ZT_RETURN_IF_ERROR(LayerWalk(*model_).forward(batch, B, T, /*with_backward=*/true, layer_source()));
  note_moe_routing();
  if (!options_.layout.head) return Status::OK();
  return model_->loss_into(batch.targets, staging_->loss_slot(static_cast<size_t>(mb)));
}

Status Trainer::stage_backward(const std::vector<MicroBatch>& mbs, int mb, float dloss) {
  InPlaceGrads grads(states_->full_grads(), model_->param_table());
  return LayerWalk(*model_).backward(mbs[static_cast<size_t>(mb)], dloss, layer_source(), grads);
}

Status Trainer::stage_recv(void* into, size_t bytes, int from, int tag, StepStats* stats) {
  Stopwatch w;
  ZT_RETURN_IF_ERROR(pp_->recv(into, bytes, from, tag)->wait());
  stats->pipeline_wait_s += w.seconds();
  return Status::OK();
}

Status Trainer::run_pipeline(const std::vector<MicroBatch>& mbs, float dloss, StepStats* stats) {
  GptModel& m = *model_;
  const int S = pp_->size(), s = pp_->rank(), M = static_cast<int>(mbs.size());
  const int B = options_.micro_batch, T = step_seq_;
  const size_t bytes = static_cast<size_t>(B) * T * options_.model.n_embd * dtype_size(model_->activation_dtype());
  const int slots = pipe_schedule_slots(options_.pipe_schedule, M, S, s);
  std::vector<WorkHandle> act_sent(static_cast<size_t>(slots)), grad_sent(static_cast<size_t>(slots));
  for (const PipeInstruction& in : make_pipe_schedule(options_.pipe_schedule, M, S, s)) {
    const int mb = in.micro_batch, slot = mb >= 0 ? mb % slots : 0;
    const size_t k = static_cast<size_t>(slot);
    if (mb >= 0) m.set_slot(slot);
    switch (in.op) {
      case PipeOp::kRecvActivation:
        ZT_RETURN_IF_ERROR(settle(act_sent[k]));  // the slot's previous output has left
        ZT_RETURN_IF_ERROR(stage_recv(m.stage_input(), bytes, s - 1, activation_tag(mb), stats));
        break;
      case PipeOp::kForward: {
        ZT_RETURN_IF_ERROR(settle(act_sent[k]));
        Stopwatch w;
        ZT_RETURN_IF_ERROR(stage_forward(mbs, mb, B, T));
        stats->forward_s += w.seconds();
        break;
      }
      case PipeOp::kSendActivation:
        act_sent[k] = pp_->send(m.stage_output(), bytes, s + 1, activation_tag(mb));
        break;
      case PipeOp::kRecvGrad:
        ZT_RETURN_IF_ERROR(stage_recv(m.stage_output_grad(), bytes, s + 1, grad_tag(mb), stats));
        break;
      case PipeOp::kBackward: {
        Stopwatch w;
        ZT_RETURN_IF_ERROR(stage_backward(mbs, mb, dloss));
        stats->backward_s += w.seconds();
        break;
      }
      case PipeOp::kSendGrad:
        ZT_RETURN_IF_ERROR(settle(grad_sent[k]));
        backend_.copy(grad_send_[k].as<void>(), m.stage_output_grad(), bytes);
        grad_sent[k] = pp_->send(grad_send_[k].as<void>(), bytes, s - 1, grad_tag(mb));
        break;
      case PipeOp::kReduceTiedGrads:
        for (WorkHandle& w : act_sent) ZT_RETURN_IF_ERROR(settle(w));
        for (WorkHandle& w : grad_sent) ZT_RETURN_IF_ERROR(settle(w));
        ZT_RETURN_IF_ERROR(reduce_tied_grads());
        break;
      case PipeOp::kReduceGrads: {
        Stopwatch w;
        ZT_RETURN_IF_ERROR(flush_grad_reductions());
        stats->backward_s += w.seconds();
        break;
      }
      case PipeOp::kOptimizerStep:  // the caller's optimizer phase, common to every layout
        break;
    }
  }
  return Status::OK();
}

// One batch forward through the pipeline (validation): stage by stage, no overlap.
Status Trainer::evaluate_pipeline(const MicroBatch& batch, double* loss_slot) {
  GptModel& m = *model_;
  const GptLayout& lay = options_.layout;
  const int s = pp_->rank();
  const int B = options_.micro_batch, T = options_.layout.local_seq(options_.seq_len);  // this rank's tokens (sp)
  const size_t bytes = static_cast<size_t>(B) * T * options_.model.n_embd * dtype_size(m.activation_dtype());
  const int tag = activation_tag(0);
  m.clear_routes();
  m.set_slot(0);
  if (!lay.embedding) ZT_RETURN_IF_ERROR(pp_->recv(m.stage_input(), bytes, s - 1, tag)->wait());
  ZT_RETURN_IF_ERROR(LayerWalk(m).forward(batch, B, T, /*with_backward=*/false, layer_source()));
  if (!lay.head) return pp_->send(m.stage_output(), bytes, s + 1, tag)->wait();
  return m.loss_into(batch.targets, loss_slot);
}

}  // namespace zt
