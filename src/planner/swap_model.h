// The time of NVMe offload's optimizer pass (io/swap_arrays.h stream) from a swap
// directory's calibrated rates (calibration.h DiskCalibration). The pass reads chunk c+1 and
// writes chunk c-1 while its thread verifies chunk c's checksums, updates it and sums it for
// writing. With C chunks, r bytes read and w written in all, and the update taking u
// seconds in all:
//   disk per chunk     d = (r + w) / C / mixed rate   (reads and writes overlap, as measured)
//   thread per chunk   h = u / C + (r + w) / C / checksum rate
//   pass = r / C / mixed rate + (C - 1) max(h, d) + h + w / C / write rate
// The first chunk is read before anything else can run and the last one is written after
// everything else; between them the slower of the disk and the thread sets the pace. One
// chunk (a sub_group_size of at least the shard, as DeepSpeed's default 1e9 is below a
// billion parameters a rank) is read, updated and written in series.
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <string>

#include "core/status.h"
#include "engine/memory_estimate.h"
#include "engine/trainer.h"
#include "planner/calibration.h"

namespace zt {

struct SwapPass {
  double read_bytes = 0.0, write_bytes = 0.0;  // the pass's disk traffic (engine/memory_estimate.h)
  size_t chunks = 1;
};

// Seconds of the pass; update_s is the update of every chunk on the host's threads.
double swap_pass_seconds(const SwapPass& pass, double update_s, const DiskCalibration& disk);

// Of that, the seconds the disk alone would take at the mixed rate (for reports).
double swap_disk_seconds(const SwapPass& pass, const DiskCalibration& disk);

// A rank's optimizer pass under NVMe offload (o.layout set to its part of the model, the
// ZeRO group and pipeline place as engine/memory_estimate.h takes them): the pass of its
// memory estimate over the calibrated offload_optimizer.nvme_path, with update_s its
// in-memory update. *disk_s gets the disk's part alone. Refused, naming what to run or
// what is not modelled, where that directory was not calibrated, or where the rank also
// moves bytes to or from disk during forward and backward (offload_param, the activation
// stash on disk): how those overlap the kernels is not modelled.
StatusOr<double> price_swap_pass(const MemoryEstimate& m, const std::string& dir, double update_s,
                                 const Calibration& cal, double* disk_s);
// The same from the rank's options.
StatusOr<double> price_swap_pass(const TrainerOptions& o, int zero_size, int zero_rank, int pp_size, int pp_rank,
                                 double update_s, const Calibration& cal, double* disk_s);

}  // namespace zt
