// calibrate's device part: on a machine where a CUDA device is usable, device 0's pinned
// host<->device copy rates (backend/cuda/cuda_device.h measure_cuda_device), which
// estimate uses to price offload's PCIe traffic. Elsewhere (no GPU, or a build without
// CUDA) there is nothing to measure, and the reason is returned as a status.
// Thread-safety: run from the main thread, before any training.
#pragma once

#include "core/status.h"
#include "planner/calibration.h"

namespace zt {

StatusOr<DeviceLinkCalibration> measure_device_link();

}  // namespace zt
