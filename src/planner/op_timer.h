// Times one OpCall (op_list.h) on a backend: the kernel of the backend's table for the
// compute dtype (AdamW as adamw_step_copy: the fp32 update, and in mixed precision the
// 16-bit compute copy it writes), on buffers of the call's shape in the backend's memory
// (a device's, on a device backend), filled with small pseudo-random values, warmed once,
// then repeated until `min_seconds` have passed (at least `min_reps` calls, at most 15),
// each call after the caches were filled with other data (as in training, where inputs
// were written long before: 128 MiB of host memory written, or on a device
// device_evict_bytes of its memory zeroed); the result is the median call, from its start to the backend's
// synchronize() after it (a device's kernels run on its stream).
// measure_op also reports the call's workspace: the resident memory its warm call needed
// beyond what the process held before it (a GEMM library's packed operands, freed after
// the call), from the OS's resident peak; 0 on a device backend (its memory is not the
// process's) and where the peak cannot be reset.
// `sync`, if set, runs before every timed call (calibrate under mpirun passes a barrier
// so every rank's kernels run at the same time, as they do in training).
// Thread-safety: one call at a time (the kernels use the process's threads).
#pragma once

#include <cstddef>
#include <functional>

#include "backend/backend.h"
#include "core/status.h"
#include "planner/op_list.h"

namespace zt {

struct OpTimerOptions {
  double min_seconds = 0.05;
  int min_reps = 3;
  std::function<void()> sync;
  size_t device_evict_bytes = size_t{256} << 20;  // a device's memory zeroed between calls (> its L2)
};

struct OpMeasurement {
  double seconds = 0.0;          // the median call
  double workspace_bytes = 0.0;  // the warm call's transient resident memory (above)
};

StatusOr<OpMeasurement> measure_op(const Backend& backend, const OpCall& op, const OpTimerOptions& options);
// measure_op's seconds.
StatusOr<double> time_op(const Backend& backend, const OpCall& op, const OpTimerOptions& options);

}  // namespace zt
