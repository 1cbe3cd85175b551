// Pipeline schedules as data (DeepSpeed's TrainSchedule idea, Megatron's phases): a pure
// function returns the instruction list one stage executes for one optimizer step of M
// micro-batches over S stages; the executor (engine/trainer_pipeline.cc) runs it. Both
// schedules end with the same reduction and step instructions.
//   GPipe: all M forwards, then all M backwards. Activations of M micro-batches live at once.
//   1F1B (PipeDream-Flush): min(S - s - 1, M) warm-up forwards, then alternate one forward
//   and one backward, then the remaining backwards. At most S - s micro-batches in flight.
//   Interleaved 1F1B (Megatron's virtual pipeline stages): each rank holds v model chunks;
//   chunk j of rank s is virtual stage j S + s, so a micro-batch crosses every rank v times.
//   The forwards run in groups of S micro-batches per chunk (chunk 0 of micro-batches 0..S-1,
//   chunk 1 of the same, ..., then chunk 0 of S..2S-1), the backwards likewise from the last
//   chunk down; (S - s - 1) 2 + (v - 1) S warm-up forwards, then one forward and one
//   backward, then the rest. The bubble shrinks from (S - 1)/M to (S - 1)/(v M) of the
//   compute, for v times the point-to-point messages. M must be a multiple of S.
// Virtual stage k receives activations from k - 1 and gradients from k + 1 (on the rank
// before and after, wrapping from the last rank to the first between chunks); the first
// virtual stage loads tokens, the last computes the loss.
// Each instruction names the activation slot its micro-batch uses: m % slots() without
// chunks; interleaved, a slot holds one chunk's micro-batch from its first instruction to
// its backward's, and the lowest free one is taken, so slots() is the most chunk
// micro-batches the rank holds at once.
#pragma once

#include <string>
#include <vector>

#include "core/status.h"

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
  int chunk = 0;         // the model chunk (interleaved 1F1B), else 0
  int slot = 0;          // the activation slot of (micro_batch, chunk)
  bool operator==(const PipeInstruction& o) const {
    return op == o.op && micro_batch == o.micro_batch && chunk == o.chunk && slot == o.slot;
  }
};

enum class PipeScheduleKind { kGPipe, k1F1B };
const char* pipe_schedule_name(PipeScheduleKind kind);

// The instructions of `stage` (0 <= stage < stages) for `micro_batches` >= 1; chunks > 1
// (1F1B only, micro_batches a multiple of stages: check_interleaved) interleaves.
std::vector<PipeInstruction> make_pipe_schedule(PipeScheduleKind kind, int micro_batches, int stages, int stage,
                                                int chunks = 1);

// Whether chunk j of stage s (S stages, v chunks each) has a virtual stage before it (it
// receives activations and sends gradients) and after it (it sends activations and receives
// gradients). A stage sends gradients at all iff its last chunk has one before it, and
// receives them iff its first chunk has one after it.
inline bool pipe_has_prev(int S, int s, int j) { return j * S + s > 0; }
inline bool pipe_has_next(int S, int s, int j, int v) { return j * S + s < S * v - 1; }

// OK, or why `chunks` virtual stages per rank cannot run: GPipe, or M not a multiple of S
// (Megatron's rule), or chunks < 1.
Status check_interleaved(PipeScheduleKind kind, int micro_batches, int stages, int chunks);

// Activation slots a stage needs: M for GPipe, min(S - s, M) for 1F1B; interleaved, the
// most chunk micro-batches in flight at once.
int pipe_schedule_slots(PipeScheduleKind kind, int micro_batches, int stages, int stage, int chunks = 1);

// True if every forward through the head (the last virtual stage) is followed at once by
// its backward, so one set of head activations serves every slot (ArenaShape::shared_head).
bool pipe_schedule_head_at_once(PipeScheduleKind kind, int micro_batches, int stages, int stage, int chunks = 1);

// "F0 F1 B0 ..." style rendering for golden tests and logs; a chunk j > 0 is ".j" after the
// micro-batch ("F3.1").
std::string format_pipe_schedule(const std::vector<PipeInstruction>& instructions);

}  // namespace zt
