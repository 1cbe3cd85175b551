// `zerotrain train`: configuration -> data -> Trainer -> loop with progress, metrics,
// validation and timing breakdown -> checkpoint, memory report, sample.
#pragma once

#include "cli/command.h"

#include <string>
#include <vector>

namespace zt {

struct TrainCommandArgs {
  std::string config_path;             // "" = the embedded demo configuration
  std::vector<std::string> overrides;  // "key.path=value", applied before validation
  std::string device;                  // "" = the configuration's training.device
  std::string resume;                  // checkpoint (tag dir or save dir with `latest`); "" = fresh
  std::string init;                    // weights only: a checkpoint or a HuggingFace model.safetensors
  bool print_config = false;           // print the resolved configuration as JSON and stop
};

// Exit status: 0 done, 2 bad configuration or input (before any training), 1 failure
// during the run.
int run_train(const TrainCommandArgs& args);

// Registers `zerotrain train` and its flags.
Command add_train_command(CLI::App& app);

}  // namespace zt
