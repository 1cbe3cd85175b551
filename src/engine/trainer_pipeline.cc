// The pipeline executor: runs this stage's instruction list (parallel/pipeline/
// schedule.h) for one optimizer step — point-to-point activations forward, gradients
// backward, the loss on the last stage — then the tied-weight and data-parallel
// gradient reductions. An interleaved rank's instructions name a chunk too: its
// neighbours wrap around the ring of ranks between chunks. Sends are asynchronous and
// waited for only before their buffer is reused. Receives are posted ahead (PipeComm) and
// waited for at their instruction; that blocked time is the stage's pipeline bubble.
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
  if (!model_->part().head) return Status::OK();
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

// A step's point-to-point operations in flight. Sends, per activation slot, are waited for
// before the slot's buffers are reused. Receives are posted ahead of their instructions
// (Megatron overlaps them the same way), so a message that arrives during a computation is
// copied in while it runs: a gradient receive right after its micro-batch's forward, into the
// slot's receive buffer; the next activation receive as soon as its slot is free.
struct PipeComm {
  std::vector<WorkHandle> act_sent, grad_sent;  // per slot
  std::vector<WorkHandle> grad_recv;            // per slot
  WorkHandle act_recv;                          // for instruction act_recv_at
  size_t act_recv_at = 0;
  size_t next_act = 0;                          // where the search for the next activation receive starts
};

namespace {

// Where a virtual stage's neighbours are: the rank before and after (wrapping between
// chunks), and message tags unique per (sender's chunk, micro-batch) between two ranks.
struct PipePeers {
  int S, s, M;
  int prev() const { return (s + S - 1) % S; }
  int next() const { return (s + 1) % S; }
  // Chunk j's input comes from the previous rank's chunk j, or on the first rank from the
  // last rank's chunk j - 1.
  int act_in_tag(int m, int j) const { return activation_tag((s == 0 ? j - 1 : j) * M + m); }
  int act_out_tag(int m, int j) const { return activation_tag(j * M + m); }
  int grad_in_tag(int m, int j) const { return grad_tag((s == S - 1 ? j + 1 : j) * M + m); }
  int grad_out_tag(int m, int j) const { return grad_tag(j * M + m); }
};

// The bytes of one stage hand-off: a (B, T, C) activation or its gradient.
size_t hand_off_bytes(const TrainerOptions& o, int T, const GptModel& m) {
  return static_cast<size_t>(o.micro_batch) * T * o.model.n_embd * dtype_size(m.activation_dtype());
}

}  // namespace

Status Trainer::wait_recv(WorkHandle& posted, StepStats* stats) {
  Stopwatch w;
  Status st = settle(posted);
  stats->pipeline_wait_s += w.seconds();
  return st;
}

void Trainer::post_receives(const std::vector<PipeInstruction>& list, size_t next, int M, PipeComm* c) {
  GptModel& m = *model_;
  const PipePeers peers{pp_->size(), pp_->rank(), M};
  const size_t bytes = hand_off_bytes(options_, step_seq_, m);
  if (next > 0) {  // instruction next - 1 is done
    const PipeInstruction& done = list[next - 1];
    const size_t k = static_cast<size_t>(done.slot);
      if (done.op == PipeOp::kForward && pipe_has_next(peers.S, peers.s, done.chunk, options_.layout.chunk_count())) {
      c->grad_recv[k] = pp_->recv(grad_recv_[k].as<void>(), bytes, peers.next(), peers.grad_in_tag(done.micro_batch, done.chunk));
    }
  }
  if (c->act_recv != nullptr) return;
  c->next_act = std::max(c->next_act, next);
  while (c->next_act < list.size() && list[c->next_act].op != PipeOp::kRecvActivation) ++c->next_act;
  if (c->next_act == list.size()) return;
  const PipeInstruction& in = list[c->next_act];
  for (size_t n = next; n < c->next_act; ++n) {  // the slot's holders until then are done with it
    const PipeInstruction& o = list[n];
    if (o.micro_batch >= 0 && o.slot == in.slot && (o.micro_batch != in.micro_batch || o.chunk != in.chunk)) return;
  }
  m.set_slot(in.slot, in.chunk);
  if (m.part().begin == m.part().end) return;  // a chunk without blocks sends its input: received in turn
  c->act_recv = pp_->recv(m.stage_input(), bytes, peers.prev(), peers.act_in_tag(in.micro_batch, in.chunk));
  c->act_recv_at = c->next_act++;
}

Status Trainer::run_pipe_instruction(const std::vector<PipeInstruction>& list, size_t i,
                                     const std::vector<MicroBatch>& mbs, float dloss, PipeComm* c, StepStats* stats) {
  GptModel& m = *model_;
  const PipeInstruction& in = list[i];
  const PipePeers peers{pp_->size(), pp_->rank(), static_cast<int>(mbs.size())};
  const int B = options_.micro_batch, T = step_seq_, mb = in.micro_batch, j = in.chunk;
  const size_t bytes = hand_off_bytes(options_, T, m);
  const size_t k = static_cast<size_t>(in.slot);
  if (mb >= 0) m.set_slot(in.slot, j);
  switch (in.op) {
    case PipeOp::kRecvActivation:
      if (c->act_recv != nullptr && c->act_recv_at == i) return wait_recv(c->act_recv, stats);
      ZT_RETURN_IF_ERROR(settle(c->act_sent[k]));  // the slot's previous output has left
      return stage_recv(m.stage_input(), bytes, peers.prev(), peers.act_in_tag(mb, j), stats);
    case PipeOp::kForward: {
      ZT_RETURN_IF_ERROR(settle(c->act_sent[k]));
      Stopwatch w;
      ZT_RETURN_IF_ERROR(stage_forward(mbs, mb, B, T));
      stats->forward_s += w.seconds();
      return Status::OK();
    }
    case PipeOp::kSendActivation:
      c->act_sent[k] = pp_->send(m.stage_output(), bytes, peers.next(), peers.act_out_tag(mb, j));
      return Status::OK();
    case PipeOp::kRecvGrad:
      if (c->grad_recv[k] == nullptr) return stage_recv(m.stage_output_grad(), bytes, peers.next(), peers.grad_in_tag(mb, j), stats);
      ZT_RETURN_IF_ERROR(wait_recv(c->grad_recv[k], stats));  // posted after the forward
      backend_.copy(m.stage_output_grad(), grad_recv_[k].as<void>(), bytes);
      return Status::OK();
    case PipeOp::kBackward: {
      Stopwatch w;
      ZT_RETURN_IF_ERROR(stage_backward(mbs, mb, dloss));
      stats->backward_s += w.seconds();
      return Status::OK();
    }
    case PipeOp::kSendGrad:
      ZT_RETURN_IF_ERROR(settle(c->grad_sent[k]));
      backend_.copy(grad_send_[k].as<void>(), m.stage_output_grad(), bytes);
      c->grad_sent[k] = pp_->send(grad_send_[k].as<void>(), bytes, peers.prev(), peers.grad_out_tag(mb, j));
      return Status::OK();
    default:
      return run_step_instruction(in.op, c, stats);
  }
}

Status Trainer::run_step_instruction(PipeOp op, PipeComm* c, StepStats* stats) {
  switch (op) {
    case PipeOp::kReduceTiedGrads:
      for (WorkHandle& w : c->act_sent) ZT_RETURN_IF_ERROR(settle(w));
      for (WorkHandle& w : c->grad_sent) ZT_RETURN_IF_ERROR(settle(w));
      return reduce_tied_grads();
    case PipeOp::kReduceGrads: {
      Stopwatch w;
      ZT_RETURN_IF_ERROR(flush_grad_reductions());
      stats->backward_s += w.seconds();
      return Status::OK();
    }
    default:  // kOptimizerStep: the caller's optimizer phase, common to every layout
      return Status::OK();
  }
}

Status Trainer::run_pipeline(const std::vector<MicroBatch>& mbs, float dloss, StepStats* stats) {
  const int S = pp_->size(), s = pp_->rank(), M = static_cast<int>(mbs.size()), v = options_.layout.chunk_count();
  const std::vector<PipeInstruction> list = make_pipe_schedule(options_.pipe_schedule, M, S, s, v);
  size_t slots = 1;  // pipe_schedule_slots, read off the list rather than building it twice
  for (const PipeInstruction& in : list) slots = std::max(slots, static_cast<size_t>(in.slot) + 1);
  PipeComm comm;
  comm.act_sent.resize(slots);
  comm.grad_sent.resize(slots);
  comm.grad_recv.resize(slots);
  for (size_t i = 0; i < list.size(); ++i) {
    post_receives(list, i, M, &comm);
    ZT_RETURN_IF_ERROR(run_pipe_instruction(list, i, mbs, dloss, &comm, stats));
  }
  return Status::OK();
}

Status Trainer::validate_interleaved() const {
  const int v = options_.layout.chunk_count();
  if (v == 1) return Status::OK();
  ZT_RETURN_IF_ERROR(check_interleaved(options_.pipe_schedule, std::max(1, options_.micro_batches), pp_size(), v));
  const std::string no = "/parallel/virtual_stages: " + std::to_string(v) + " with ";
  if (options_.model.moe.enabled()) {
    return Status::Unimplemented(no + "experts (model.moe) is not supported yet: the balance loss is gathered per "
                                 "stage, not per chunk");
  }
  if (activation_stash_kind(options_) != ActivationStashKind::kNone) {
    return Status::Unimplemented(no + "activation_checkpointing.cpu_checkpointing is not supported yet");
  }
  return Status::OK();
}

// One batch forward through the pipeline (validation): stage by stage, no overlap.
// An interleaved rank walks its chunks in turn, each after the previous rank's.
Status Trainer::evaluate_pipeline(const MicroBatch& batch, double* loss_slot) {
  GptModel& m = *model_;
  const PipePeers peers{pp_->size(), pp_->rank(), 1};
  const int B = options_.micro_batch, T = options_.layout.local_seq(options_.seq_len);  // this rank's tokens (sp)
  const size_t bytes = hand_off_bytes(options_, T, m);
  m.clear_routes();
  for (int j = 0; j < options_.layout.chunk_count(); ++j) {
    m.set_slot(0, j);
    if (!m.part().embedding) {
      ZT_RETURN_IF_ERROR(pp_->recv(m.stage_input(), bytes, peers.prev(), peers.act_in_tag(0, j))->wait());
    }
    ZT_RETURN_IF_ERROR(LayerWalk(m).forward(batch, B, T, /*with_backward=*/false, layer_source()));
    if (m.part().head) return m.loss_into(batch.targets, loss_slot);
    ZT_RETURN_IF_ERROR(pp_->send(m.stage_output(), bytes, peers.next(), peers.act_out_tag(0, j))->wait());
  }
  return Status::OK();
}

}  // namespace zt
