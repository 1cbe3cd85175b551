// run_report.json: what `zerotrain report` reads besides metrics.csv, written by rank 0
// at the end of `zerotrain train` from the figures engine/run_report.h gathered.
#pragma once

#include <string>

#include "config/config.h"
#include "core/status.h"
#include "engine/trainer.h"
#include "io/json_strict.h"

namespace zt {

// <output_dir>/run_report.json, what `zerotrain report` draws besides metrics.csv: the
// per-rank figures above, every rank's memory estimate, the communication table, the
// model's FLOPs per token and the measured FMA peak (for MFU), the configuration and
// the machine. Rank 0 only.
Status write_run_report_json(const ZtConfig& config, int world, const Trainer& trainer, const Json& ranks,
                             const std::string& comms, double peak_flops);

}  // namespace zt
