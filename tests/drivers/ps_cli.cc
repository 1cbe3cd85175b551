// Test driver: `zerotrain train` for a configuration with a "parameter_server" section,
// i.e. run_param_server_train, callable before the train command routes to it.
//   zt_ps_cli [--config FILE] [--set key=value]...   (no --config: the demo configuration)
#include <cstdio>
#include <string>

#include "cli/ps_command.h"

int main(int argc, char** argv) {
  zt::TrainCommandArgs args;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i];
    if (k == "--config") {
      args.config_path = argv[i + 1];
    } else if (k == "--set") {
      args.overrides.push_back(argv[i + 1]);
    } else {
      std::fprintf(stderr, "unknown flag %s\n", k.c_str());
      return 2;
    }
  }
  if (!zt::param_server_requested(args)) {
    std::fprintf(stderr, "zt_ps_cli: the configuration has no enabled parameter_server section\n");
    return 2;
  }
  return zt::run_param_server_train(args);
}
