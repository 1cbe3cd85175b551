// Measures a swap directory for the planner (calibration.h DiskCalibration) with NVMe
// offload's own swapper (io/swap_arrays.h) and I/O engine at the run's aio settings: two
// fp32 arrays of bytes_per_array each (Adam's two moments), each in `chunks` chunks. Their
// first write gives write_bytes_per_s. Then three passes that read every chunk in and write
// it back with no update between (the optimizer pass's pattern, checksums included); the
// median pass's time fixes mixed_bytes_per_s as the rate at which planner/swap_model.h's
// pass with no update takes that long. checksum_bytes_per_s is the swap checksums'
// (io/checksum.h checksum_blocks) best rate over one chunk on this process's threads.
// So at the probe's geometry the model reproduces the measured pass; the calibration
// records that geometry, and calibrate probes at a config's own (its shard and
// sub_group_size) where it is given one.
// The swap files are unlinked as they are opened: nothing stays in the directory, even if
// the process dies.
// Thread-safety: one probe at a time (it uses the process's threads).
#pragma once

#include <cstddef>
#include <string>

#include "core/status.h"
#include "io/aio_config.h"
#include "planner/calibration.h"

namespace zt {

struct DiskProbeOptions {
  size_t bytes_per_array = size_t{1} << 30;
  size_t chunks = 16;  // each array's chunks (the run's sub_group_size makes them; 64 MiB at the default bytes)
  AioConfig aio;
  bool pin = true;  // page-locked chunk buffers, as offload's pin_memory default
};

// Creates `dir` if needed. Errors name the directory and what failed.
StatusOr<DiskCalibration> probe_swap_disk(const std::string& dir, const DiskProbeOptions& options);

}  // namespace zt
