// Graceful pre-emption: SIGTERM or SIGINT sets a flag (nothing else happens in the
// handler); the training loop asks at every step boundary whether any rank of the job
// has seen one (a one-integer all-reduce, so a signal to a single rank, or to all of
// them at slightly different times, stops every rank after the same step), then saves
// a checkpoint and exits 0.
#pragma once

#include "comm/process_group.h"
#include "core/status.h"

namespace zt {

// Installs the handlers (idempotent).
void install_stop_handlers();
// The signal this process received (SIGTERM, SIGINT) or 0.
int stop_signal_received();
// Collective over `world` (null: this process alone): whether any rank received one.
StatusOr<bool> any_rank_stopping(ProcessGroup* world);

}  // namespace zt
