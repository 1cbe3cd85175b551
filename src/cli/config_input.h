// The configuration a training command starts from: the JSON file of --config (or the
// built-in demo's), with every --set and --device applied, and the world size the
// launcher announced. Errors are the user's input.
#pragma once

#include "cli/train_command.h"
#include "core/status.h"
#include "io/json_strict.h"

namespace zt {

// The world size mpirun announced in the environment (1 without a launcher).
int launched_world_size();

// The configuration file (or the demo's) with every --set applied; not yet validated.
StatusOr<Json> load_config_json(const TrainCommandArgs& args);

}  // namespace zt
