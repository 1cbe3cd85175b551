// The planner's step-time model: one optimizer step of a run layout on a cluster, priced
// from a Calibration (calibration.h). Per pipeline stage s and micro-batch:
//   t_s = forward + backward kernels (op_list.h; a checkpointed block's forward twice; with
//         tp > 1 each at its slowest rank's calibrated time, as the group syncs between them)
//       + tensor-parallel all-reduces of the B·T·C fp32 partials (2 per block forward, 2
//         backward, 2 more per recomputed block, 1 for the vocabulary-parallel embedding
//         and 1 for the head's input gradient)
//       + pipeline p2p: the B·T·C activation sent forward and its gradient sent back
//       + ZeRO-3: the all-gather of every layer's parameters for forward and again for
//         backward, and the reduce-scatter of the gradients.
// The pipeline runs m micro-batches as the first one flows through every stage and the
// other m-1 follow at the slowest stage's pace: Σ_s t_s + (m-1)·max_s t_s, which is
// (m+p-1)·t for equal stages (GPipe and 1F1B alike); the bubble is the excess over m·max t.
// Interleaved 1F1B with v chunks per rank fills and drains at a v-th of each stage's time,
// Σ_s t_s / v + (m - 1/v)·max_s t_s (Megatron's (p-1)/(v m)), and each rank's chunks send
// 2v boundaries' messages (one fewer at each end of the pipeline).
// Ulysses (sp > 1): a rank's kernels run on its T/sp tokens, attention on the whole sequence
// for n_head/sp heads; each block's forward exchanges q, k, v (C + 2 kv_dim per token where
// sp divides the kv heads, else 3C) and the attention output (C), its backward the same two
// again (and a recomputed block its forward's), each an all-to-all priced as sp - 1 messages
// of 1/sp of the buffer on the p2p fit.
// After the last micro-batch, on the slowest stage: the data-parallel gradient reduction
// (stage 0 all-reduce, 1 reduce-scatter, 2-3 one reduce-scatter per micro-batch, counted
// above for 3), the optimizer update of the owned elements, the parameter all-gather
// (stages 1-2, of the compute dtype) and the step's scalar all-reduces (loss, norm,
// checks). Gradient buckets are not assumed to overlap backward. With NVMe offload of the
// optimizer the update is its pass over the calibrated swap directory (swap_model.h).
// A poor fit is refused: where the communication fits' own error (validated between their
// measured sizes) times communication's share of the step exceeds kMaxCommStepError, the
// prediction is an error that names the fit, instead of a time.
// A group's link is "intra" when all its ranks are on one host (ranks fill hosts in order,
// mpirun --map-by slot), else "inter".
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <vector>

#include "engine/trainer.h"
#include "parallel/grid.h"
#include "parallel/pipeline/partition.h"
#include "planner/calibration.h"

namespace zt {

struct ClusterSpec {
  int hosts = 1;
  int procs_per_host = 1;
  int threads_per_rank = 1;
  double mem_per_host = 0.0;    // bytes; 0: not checked
  double mem_per_device = 0.0;  // bytes of the device each rank of a device run drives; 0: not checked
  int world() const { return hosts * procs_per_host; }
};

// A run layout as the planner sees it: the Trainer's options (layout unset), the grid and
// the micro-batches one step runs per rank.
struct RunShape {
  TrainerOptions options;
  int tp = 1, dp = 1, pp = 1;
  StagePartition partition = StagePartition::kFlops;
  int micro_batches = 1;  // per step on each rank (gradient accumulation; pipeline's m)
  int virtual_stages = 1;  // interleaved 1F1B: chunks per pipeline rank
  int sp = 1;              // Ulysses sequence parallelism (a divisor of dp)
};

// The relative error of the communication fits a step used, at the sizes it priced
// (comm_model.h: fit_rel_error_at), weighted by each call's time; -1: not validated.
struct CommFitError {
  double rel_error = -1.0;
  double bytes = 0.0;  // the message size of the call whose error costs the most time
  std::string what;    // and its fit: "intra all_reduce"
};

struct StepPrediction {
  double step_s = 0.0;
  double compute_s = 0.0;    // kernels of all micro-batches on the slowest stage
  double bubble_s = 0.0;     // pipeline fill and drain beyond m x the slowest stage
  double tp_comm_s = 0.0;    // on the slowest stage, all micro-batches
  double pp_comm_s = 0.0;
  double sp_comm_s = 0.0;    // Ulysses' all-to-alls, all micro-batches
  double zero3_comm_s = 0.0;
  double dp_comm_s = 0.0;    // gradient reduction, parameter all-gather, scalar all-reduces
  double optimizer_s = 0.0;  // with NVMe offload, the whole optimizer pass (swap_model.h)
  double swap_disk_s = 0.0;  // of it, what the disk alone would take (0: no NVMe offload)
  std::string swap_dir;      // and the swap directory it was priced for
  bool host_update = false;  // a device run's optimizer on the host: optimizer_s is the offload pipeline's
                             // lower bound (cli/plan_eval.h)
  std::string device = "cpu";  // whose compute table priced the kernels
  int ops = 0;               // kernel calls priced per micro-batch (all stages)
  int extrapolated_ops = 0;  // of them, priced from another shape of the same kernel
  std::vector<std::string> links;  // the links the run's groups use ("intra", "inter")
  int table_threads = 0;           // the compute table priced from: its threads per rank
  int table_ranks = 0;             // and the ranks that ran at once when it was measured
  CommFitError comm_fit;
  double comm_s() const { return tp_comm_s + pp_comm_s + sp_comm_s + zero3_comm_s + dp_comm_s; }
};

StatusOr<StepPrediction> predict_step(const RunShape& run, const ClusterSpec& cluster, const Calibration& cal);

// "intra" or "inter" for the ranks of a group under mpirun --map-by slot.
std::string group_link(const std::vector<int>& ranks, int procs_per_host);

}  // namespace zt
