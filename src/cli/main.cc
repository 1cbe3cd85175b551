// zerotrain: the command-line entry point. Sub-commands: train, estimate (memory per rank before a
// run), prepare, sample, eval, export, import, doctor (the machine report, like DeepSpeed's ds_report),
// report (an HTML page of runs), plan, calibrate, launch, config-coverage. Each registers its own
// flags (cli/command.h); main parses and dispatches.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <cstdlib>
#include <vector>

#include "backend/backend.h"
#include "cli/checkpoint_commands.h"
#include "cli/command.h"
#include "cli/doctor_command.h"
#include "cli/calibrate_command.h"
#include "cli/estimate_command.h"
#include "cli/plan_command.h"
#include "cli/launch_command.h"
#include "cli/report_command.h"
#include "cli/tool_commands.h"
#include "cli/train_command.h"
#include "core/version.h"

int main(int argc, char** argv) {
  CLI::App app{"zerotrain: DeepSpeed-style training of GPT models, native C++.\n"
               "Configuration is a DeepSpeed ds_config.json with zerotrain's model/data/training sections."};
  app.require_subcommand(1);

  const std::vector<zt::Command> commands = {
      zt::add_train_command(app),    zt::add_prepare_command(app),  zt::add_sample_command(app),
      zt::add_eval_command(app),     zt::add_export_command(app),   zt::add_import_command(app),
      zt::add_launch_command(app),   zt::add_doctor_command(app),   zt::add_estimate_command(app),
      zt::add_plan_command(app),     zt::add_calibrate_command(app), zt::add_config_coverage_command(app),
      zt::add_report_command(app)};
  app.set_version_flag("--version", zt::kZerotrainVersion);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& h) {
    return app.exit(h);
  } catch (const CLI::ParseError& err) {
    app.exit(err);
    return 2;  // bad usage, like a bad configuration
  }
  for (const zt::Command& c : commands) {
    if (!c.app->parsed()) continue;
    // ZT_ISA and ZT_GEMM are read once, here: a bad value stops before any work.
    if (c.needs_backend && !zt::backend_environment_ok()) return 2;
    const int code = c.run();
    // The command has closed everything it opened (its session, trainer, files, MPI). The
    // process ends without static destructors: oneDNN 2.6.3's teardown of its JIT GEMM
    // kernels segfaults now and then (about 1 in 40 runs that stop on a signal, in
    // libdnnl's exit handlers; an ASan build reports nothing of ours on the same runs).
    // Handlers that must run at the end register with std::at_quick_exit.
    std::fflush(nullptr);
    std::quick_exit(code);
  }
  return 2;
}
