// Graceful pre-emption: SIGTERM, SIGINT or SIGUSR1 sets a flag (nothing else happens in
// the handler); the training loop asks at every step boundary whether any rank of the
// job has seen one (a one-integer all-reduce, so a signal to a single rank, or to all of
// them at slightly different times, stops every rank after the same step), then saves
// a checkpoint and exits 0.
// Under mpirun: Open MPI's mpirun forwards SIGUSR1 to every rank and lets them finish,
// but answers SIGTERM/SIGINT by forwarding SIGTERM and then SIGKILLing the ranks one
// second later (odls_base_sigkill_timeout), too soon for a checkpoint of a real model.
// So send SIGUSR1 to mpirun, or SIGTERM to the ranks themselves (as Slurm and
// Kubernetes do).
#pragma once

#include "comm/process_group.h"
#include "core/status.h"

namespace zt {

// Installs the handlers (idempotent).
void install_stop_handlers();
// The signal this process received (SIGTERM, SIGINT, SIGUSR1) or 0.
int stop_signal_received();
// Collective over `world` (null: this process alone): whether any rank received one.
StatusOr<bool> any_rank_stopping(ProcessGroup* world);

}  // namespace zt
