// GPipe, 1F1B and interleaved 1F1B instruction lists.
#include "parallel/pipeline/schedule.h"

#include <algorithm>
#include <map>
#include <utility>

#include "core/check.h"

namespace zt {

const char* pipe_op_name(PipeOp op) {
  switch (op) {
    case PipeOp::kRecvActivation: return "RecvAct";
    case PipeOp::kForward: return "F";
    case PipeOp::kSendActivation: return "SendAct";
    case PipeOp::kRecvGrad: return "RecvGrad";
    case PipeOp::kBackward: return "B";
    case PipeOp::kSendGrad: return "SendGrad";
    case PipeOp::kReduceTiedGrads: return "ReduceTied";
    case PipeOp::kReduceGrads: return "ReduceGrads";
    case PipeOp::kOptimizerStep: return "Step";
  }
  return "?";
}

const char* pipe_schedule_name(PipeScheduleKind kind) { return kind == PipeScheduleKind::kGPipe ? "gpipe" : "1f1b"; }

namespace {

struct Builder {
  int stages, stage, chunks;
  std::vector<PipeInstruction> out;
  void forward(int m, int j = 0) {
    if (pipe_has_prev(stages, stage, j)) out.push_back({PipeOp::kRecvActivation, m, j});
    out.push_back({PipeOp::kForward, m, j});
    if (pipe_has_next(stages, stage, j, chunks)) out.push_back({PipeOp::kSendActivation, m, j});
  }
  void backward(int m, int j = 0) {
    if (pipe_has_next(stages, stage, j, chunks)) out.push_back({PipeOp::kRecvGrad, m, j});
    out.push_back({PipeOp::kBackward, m, j});
    if (pipe_has_prev(stages, stage, j)) out.push_back({PipeOp::kSendGrad, m, j});
  }
  void finish() {
    out.push_back({PipeOp::kReduceTiedGrads, -1});
    out.push_back({PipeOp::kReduceGrads, -1});
    out.push_back({PipeOp::kOptimizerStep, -1});
  }
};

// Megatron's order of a rank's chunk-forwards (and, chunks reversed, chunk-backwards):
// the i-th goes to chunk (i / S) mod v, micro-batch (i / (S v)) S + i mod S.
int interleaved_chunk(int i, int S, int v, bool backward) {
  const int j = (i / S) % v;
  return backward ? v - 1 - j : j;
}
int interleaved_micro(int i, int S, int v) { return (i / (S * v)) * S + i % S; }

void interleaved(Builder* b, int M) {
  const int S = b->stages, v = b->chunks, total = M * v;
  // With M == S everything is warm-up (Megatron's all_warmup case).
  const int warmup = M == S ? total : std::min(total, (S - b->stage - 1) * 2 + (v - 1) * S);
  auto fwd = [&](int i) { b->forward(interleaved_micro(i, S, v), interleaved_chunk(i, S, v, false)); };
  auto bwd = [&](int i) { b->backward(interleaved_micro(i, S, v), interleaved_chunk(i, S, v, true)); };
  for (int i = 0; i < warmup; ++i) fwd(i);
  for (int i = 0; i < total - warmup; ++i) {
    fwd(warmup + i);
    bwd(i);
  }
  for (int i = total - warmup; i < total; ++i) bwd(i);
}

// Interleaved: the lowest free slot from a (micro-batch, chunk)'s first instruction; freed
// by its backward (a SendGrad after it still names it).
void assign_slots(std::vector<PipeInstruction>* list) {
  std::map<std::pair<int, int>, int> held;
  std::vector<bool> busy;
  for (PipeInstruction& in : *list) {
    if (in.micro_batch < 0) continue;
    const std::pair<int, int> key{in.micro_batch, in.chunk};
    auto it = held.find(key);
    if (it == held.end()) {
      const size_t free = static_cast<size_t>(std::find(busy.begin(), busy.end(), false) - busy.begin());
      if (free == busy.size()) busy.push_back(false);
      busy[free] = true;
      it = held.emplace(key, static_cast<int>(free)).first;
    }
    in.slot = it->second;
    if (in.op == PipeOp::kBackward) busy[static_cast<size_t>(in.slot)] = false;  // SendGrad finds it in `held`
  }
}

}  // namespace

Status check_interleaved(PipeScheduleKind kind, int M, int S, int v) {
  if (v < 1) return Status::InvalidArgument("/parallel/virtual_stages: must be at least 1, not " + std::to_string(v));
  if (v == 1) return Status::OK();
  if (kind != PipeScheduleKind::k1F1B) {
    return Status::InvalidArgument("/parallel/virtual_stages: " + std::to_string(v) +
                                   " chunks per rank interleave the 1F1B schedule; pipeline_schedule \"gpipe\" has none");
  }
  if (S < 2) return Status::InvalidArgument("/parallel/virtual_stages: " + std::to_string(v) + " needs pipeline parallelism (parallel.pp > 1)");
  if (M % S != 0) {
    return Status::InvalidArgument("/parallel/virtual_stages: interleaved 1F1B needs the micro-batches per step (" +
                                   std::to_string(M) + ") to be a multiple of the pipeline stages (" +
                                   std::to_string(S) + "), as Megatron's schedule does");
  }
  return Status::OK();
}

std::vector<PipeInstruction> make_pipe_schedule(PipeScheduleKind kind, int M, int S, int s, int v) {
  ZT_CHECK(check_interleaved(kind, M, S, v).ok(), "%s", check_interleaved(kind, M, S, v).message().c_str());
  Builder b{S, s, v, {}};
  if (v > 1) {
    interleaved(&b, M);
    assign_slots(&b.out);
  } else if (kind == PipeScheduleKind::kGPipe) {
    for (int m = 0; m < M; ++m) b.forward(m);
    for (int m = 0; m < M; ++m) b.backward(m);
  } else {
    const int warmup = std::min(S - s - 1, M);
    for (int m = 0; m < warmup; ++m) b.forward(m);            // warm-up: fill the pipeline
    for (int i = 0; i < M - warmup; ++i) {                    // steady state: one forward, one backward
      b.forward(warmup + i);
      b.backward(i);
    }
    for (int m = M - warmup; m < M; ++m) b.backward(m);       // cool-down: drain it
  }
  if (v == 1) {
    const int slots = pipe_schedule_slots(kind, M, S, s);
    for (PipeInstruction& in : b.out) in.slot = in.micro_batch >= 0 ? in.micro_batch % slots : 0;
  }
  b.finish();
  return b.out;
}

int pipe_schedule_slots(PipeScheduleKind kind, int M, int S, int s, int v) {
  if (v == 1) return kind == PipeScheduleKind::kGPipe ? M : std::min(S - s, M);
  int most = 0;
  for (const PipeInstruction& i : make_pipe_schedule(kind, M, S, s, v)) most = std::max(most, i.slot + 1);
  return most;
}

bool pipe_schedule_head_at_once(PipeScheduleKind kind, int M, int S, int s, int v) {
  if (s != S - 1) return false;
  const std::vector<PipeInstruction> list = make_pipe_schedule(kind, M, S, s, v);
  for (size_t i = 0; i < list.size(); ++i) {
    const PipeInstruction& in = list[i];
    if (in.op != PipeOp::kForward || in.chunk != v - 1) continue;
    if (i + 1 == list.size() || list[i + 1].op != PipeOp::kBackward || list[i + 1].micro_batch != in.micro_batch ||
        list[i + 1].chunk != in.chunk) {
      return false;
    }
  }
  return true;
}

std::string format_pipe_schedule(const std::vector<PipeInstruction>& instructions) {
  std::string out;
  for (const PipeInstruction& i : instructions) {
    if (!out.empty()) out += ' ';
    out += pipe_op_name(i.op);
    if (i.micro_batch >= 0) out += std::to_string(i.micro_batch);
    if (i.chunk > 0) out += "." + std::to_string(i.chunk);
  }
  return out;
}

}  // namespace zt
