// `zerotrain train` with a "parameter_server" section: S server ranks and W worker ranks
// in one mpirun (parallel/param_server/). run_train hands over to it before resolving the
// data-parallel layout, which differs: the data-parallel size is W, not the world.
#pragma once

#include "cli/train_command.h"

namespace zt {

// True when the run's configuration (the file or the demo, after --set overrides) has
// an enabled "parameter_server" section. A configuration that does not load gives false
// (run_train then reports the error).
bool param_server_requested(const TrainCommandArgs& args);

// The run; exit statuses as run_train's: 0 done, 2 bad configuration or input, 1 (or
// 75 for a peer past the deadline: the whole job is aborted) failure while running.
int run_param_server_train(const TrainCommandArgs& args);

}  // namespace zt
