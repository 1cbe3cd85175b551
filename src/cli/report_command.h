// `zerotrain report RUN_DIR [RUN_DIR ...] -o report.html [--png loss.png]`: one
// self-contained HTML page of one or more runs (several are overlaid): loss and eval-loss
// curves, learning rate, throughput and MFU, the wall-clock breakdown per step as stacked
// bars, for runs with experts the balance loss, load imbalance and dropped tokens per step,
// memory per rank against the estimate, the communication table, the configuration
// and the machine. It reads <run>/metrics.csv and, when present, <run>/run_report.json
// (written at the end of `zerotrain train`). The charts are Chart.js (npm chart.js,
// installed by setup.sh under third_party/npm), inlined into the page, so it opens with
// no network. Every chart's canvas carries data-points (points drawn) and data-series.
// --png also draws the loss curves with gnuplot (Debian's gnuplot-nox).
#pragma once

#include "cli/command.h"

#include <string>
#include <vector>

namespace zt {

struct ReportArgs {
  std::vector<std::string> runs;
  std::string output = "report.html";
  std::string png;  // empty: none
};

// Exit status: 0 written, 2 a run directory or a needed tool is missing or unreadable.
int run_report(const ReportArgs& args);

// Registers `zerotrain report` and its flags.
Command add_report_command(CLI::App& app);

}  // namespace zt
