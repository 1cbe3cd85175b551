// Pipeline schedules as data (DeepSpeed's TrainSchedule idea, Megatron's phases): a pure
// function returns the instruction list one stage executes for one optimizer step of M
// micro-batches over S stages; the executor (engine/trainer_pipeline.cc) runs it. Both
// schedules end with the same reduction and step instructions.
//   GPipe: all M forwards, then all M backwards. Activations of M micro-batches live at once.
//   1F1B (PipeDream-Flush): min(S - s - 1, M) warm-up forwards, then alternate one forward
//   and one backward, then the remaining backwards. At most S - s micro-batches in flight.
// Stage s receives activations from s - 1 and gradients from s + 1; the first stage loads
// tokens, the last computes the loss. Micro-batch m uses activation slot m % slots().
#pragma once

#include <string>
#include <vector>

namespace zt {

enum class PipeOp {
  kRecvActivation,  // from the previous stage, into the micro-batch's slot
  kForward,         // embeddings (first stage), this stage's blocks, head and loss (last stage)
  kSendActivation,  // to the next stage
  kRecvGrad,        // gradient of this stage's output, from the next stage
  kBackward,        // head (last stage), blocks, embeddings (first stage)
  kSendGrad,        // gradient of this stage's input, to the previous stage
  kReduceTiedGrads, // wte gradient shared by the first and last stages
  kReduceGrads,     // data-parallel gradient reduction
  kOptimizerStep,
};
const char* pipe_op_name(PipeOp op);

struct PipeInstruction {
  PipeOp op;
  int micro_batch = -1;  // -1 for the step-level instructions
  bool operator==(const PipeInstruction& o) const { return op == o.op && micro_batch == o.micro_batch; }
};

enum class PipeScheduleKind { kGPipe, k1F1B };
const char* pipe_schedule_name(PipeScheduleKind kind);

// The instructions of `stage` (0 <= stage < stages) for `micro_batches` >= 1.
std::vector<PipeInstruction> make_pipe_schedule(PipeScheduleKind kind, int micro_batches, int stages, int stage);

// Activation slots a stage needs: M for GPipe, min(S - s, M) for 1F1B.
int pipe_schedule_slots(PipeScheduleKind kind, int micro_batches, int stages, int stage);

// "F0 F1 B0 ..." style rendering for golden tests and logs.
std::string format_pipe_schedule(const std::vector<PipeInstruction>& instructions);

}  // namespace zt
