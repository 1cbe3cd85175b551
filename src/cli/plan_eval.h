// One run layout judged before launch, for `estimate` and `plan`: the memory of the
// largest rank (each pipeline stage's tp-rank-0, dp-rank-0 rank, which holds the largest
// shard; engine/memory_estimate.h) plus the process's own base and its largest kernel
// workspace (a GEMM library's packed operands) from the calibration, and
// the token files every rank maps (their pages are resident once validated), the
// per-host bound (procs per host x the largest rank) against --mem-per-host; on a device
// (a GPU run) the largest rank's device part against --mem-per-device; and the predicted
// step time (planner/perf_model.h) when a calibration is given and the run is on the CPU
// (calibrate times CPU kernels: a device run's time is refused with that reason).
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <vector>

#include "config/config.h"
#include "engine/memory_estimate.h"
#include "planner/calibration.h"
#include "planner/perf_model.h"

namespace zt {

struct LayoutEval {
  std::vector<MemoryEstimate> stage_memory;  // per pipeline stage
  double base_bytes = 0.0;                   // the process itself (calibration; 0 without)
  double data_bytes = 0.0;                   // the token files, mapped whole and read once to validate
  double workspace_bytes = 0.0;              // the largest rank's largest kernel workspace (calibration; 0 without)
  double rank_bytes_max = 0.0;               // largest rank's host memory: its estimate total (on a
                                             // device, its host_bytes) + its workspace + base + data
  double device_bytes_max = 0.0;             // a device run: the largest rank's device memory (0 on the CPU)
  double host_bytes_max = 0.0;               // procs per host x rank_bytes_max
  bool on_device = false;                    // a device run (its ranks' model states and activations on the device)
  bool fits_host = true;                     // host_bytes_max <= mem_per_host (or no limit)
  bool fits_device = true;                   // device_bytes_max <= mem_per_device (or no limit, or not a device run)
  bool fits() const { return fits_host && fits_device; }
  // A device run with optimizer offload: the host update of the largest rank's optimizer
  // range (the calibrated host AdamW, at this layout's threads per rank) and its PCIe bytes
  // at the calibrated pinned rate of the slower direction, in seconds a step; -1: not
  // priced, and offload_note says why. The offload pipeline overlaps the two, so they add
  // at least the larger and at most their sum to the device's step.
  // With the state on NVMe the update is the optimizer pass over the swap directory
  // (planner/swap_model.h), and offload_disk_s its disk's part alone.
  double offload_update_s = -1.0, offload_pcie_s = -1.0, offload_disk_s = -1.0;
  std::string offload_note;
  bool timed = false;
  StepPrediction time;
  Status time_status;  // why there is no time (no calibration, a link not calibrated, ...)
};

StatusOr<LayoutEval> evaluate_layout(const ZtConfig& cfg, const ClusterSpec& cluster, const Calibration* cal);

// The step's figures as one line: "step 1.234 s = compute 1.000 + bubble ... ".
std::string format_step(const StepPrediction& p);
// What a prediction took for granted, one line each, for printing under it.
std::vector<std::string> prediction_assumptions(const ClusterSpec& cluster, const Calibration& cal,
                                                const StepPrediction& p);
// Bytes from "24GiB", "512MB", "1.5e9" (B, KB/KiB, MB/MiB, GB/GiB, TB/TiB); false if not one.
bool parse_bytes(const std::string& text, double* bytes);

}  // namespace zt
