// End-of-run reports of `zerotrain train`: every rank's memory (parameters, gradients,
// optimizer state, buckets, activations, peak RSS) and communication (logical bytes per
// collective kind, time in communication and the share hidden behind computation),
// collected on rank 0 (a collective over the job) and printed as tables.
#pragma once

#include <string>

#include "comm/process_group.h"
#include "engine/trainer.h"
#include "io/json_strict.h"

namespace zt {

// Collective over `group` (every rank of the job); its rank 0 returns the text, others "".
// Communication figures are those of the trainer's data-parallel group. On rank 0,
// `ranks` (when given) receives the same figures, one object per rank, for
// run_report.json.
StatusOr<std::string> collect_run_report(Trainer& trainer, ProcessGroup& group, Json* ranks = nullptr);

}  // namespace zt
