// `zerotrain train` with a "parameter_server" section: S server ranks and W worker ranks
// in one mpirun (parallel/param_server/). run_train hands over to it before resolving the
// data-parallel layout, which differs: the data-parallel size is W, not the world.
#pragma once

#include "cli/train_command.h"
#include "io/json_strict.h"

namespace zt {

// True when the run's configuration JSON (load_config_json: the file or the demo, after
// --set overrides) has an enabled "parameter_server" section.
bool param_server_requested(const Json& root);

// The run of `args` whose configuration JSON is `root`; exit statuses as run_train's: 0
// done, 2 bad configuration or input, 1 (or 75 for a peer past the deadline: the whole
// job is aborted) failure while running.
int run_param_server_train(const TrainCommandArgs& args, const Json& root);

}  // namespace zt
