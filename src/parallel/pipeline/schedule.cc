// GPipe and 1F1B instruction lists.
#include "parallel/pipeline/schedule.h"

#include <algorithm>

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
  int stages, stage;
  std::vector<PipeInstruction> out;
  void forward(int m) {
    if (stage > 0) out.push_back({PipeOp::kRecvActivation, m});
    out.push_back({PipeOp::kForward, m});
    if (stage < stages - 1) out.push_back({PipeOp::kSendActivation, m});
  }
  void backward(int m) {
    if (stage < stages - 1) out.push_back({PipeOp::kRecvGrad, m});
    out.push_back({PipeOp::kBackward, m});
    if (stage > 0) out.push_back({PipeOp::kSendGrad, m});
  }
  void finish() {
    out.push_back({PipeOp::kReduceTiedGrads, -1});
    out.push_back({PipeOp::kReduceGrads, -1});
    out.push_back({PipeOp::kOptimizerStep, -1});
  }
};

}  // namespace

std::vector<PipeInstruction> make_pipe_schedule(PipeScheduleKind kind, int M, int S, int s) {
  Builder b{S, s, {}};
  if (kind == PipeScheduleKind::kGPipe) {
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
  b.finish();
  return b.out;
}

int pipe_schedule_slots(PipeScheduleKind kind, int M, int S, int s) {
  return kind == PipeScheduleKind::kGPipe ? M : std::min(S - s, M);
}

std::string format_pipe_schedule(const std::vector<PipeInstruction>& instructions) {
  std::string out;
  for (const PipeInstruction& i : instructions) {
    if (!out.empty()) out += ' ';
    out += pipe_op_name(i.op);
    if (i.micro_batch >= 0) out += std::to_string(i.micro_batch);
  }
  return out;
}

}  // namespace zt
